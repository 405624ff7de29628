// The app's logic. It runs in the web app container (a Chromium-based web
// view), so modern JavaScript works; the page needs no network access.
"use strict";

// Pure logic, kept apart from the page so that tests/ can run it with node.
function greetingText(taps, texts) {
    if (taps === 0) {
        return texts.zero;
    }
    return (taps === 1 ? texts.one : texts.many).replace("%1", String(taps));
}

if (typeof document !== "undefined") {
    const greeting = document.getElementById("greeting");
    const button = document.getElementById("tap");
    let taps = 0;

    button.addEventListener("click", function () {
        taps += 1;
        greeting.textContent = greetingText(taps, greeting.dataset);
    });
}

if (typeof module !== "undefined") {
    module.exports = { greetingText };
}
