// The app's logic. It runs in the web app container (a Chromium-based web
// view), so modern JavaScript works; the page needs no network access.
"use strict";

// The gettext domain of the app's translations: its package name.
const DOMAIN = {{ (cookiecutter.app_name ~ "." ~ cookiecutter.namespace) | tojson }};

// Pure logic, kept apart from the page so that tests/ can run it with node.
// tr: i18n.tr (www/js/i18n.js), which translates what it is given.
function greetingText(taps, tr) {
    if (taps === 0) {
        return tr("Hello World!");
    }
    return tr("You tapped %1 time", "You tapped %1 times", taps).replace("%1", String(taps));
}

if (typeof document !== "undefined") {
    const greeting = document.getElementById("greeting");
    const button = document.getElementById("tap");
    let taps = 0;

    // Every text of the page, in the user's language once its catalog is loaded.
    function render() {
        document.title = i18n.tr({{ cookiecutter.title | tojson }});
        document.getElementById("title").textContent = document.title;
        button.textContent = i18n.tr("Tap me");
        greeting.textContent = greetingText(taps, i18n.tr);
    }

    button.addEventListener("click", function () {
        taps += 1;
        render();
    });
    // The package's share/locale, seen from www/index.html.
    i18n.load(DOMAIN, "../share/locale").then(function (language) {
        if (language) {
            document.documentElement.lang = language.replace("_", "-");
        }
        render();
    });
}

if (typeof module !== "undefined") {
    module.exports = { greetingText };
}
