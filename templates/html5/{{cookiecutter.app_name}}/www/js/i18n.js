// i18n.tr() for the page, as QML apps have it, from the same gettext catalogs: the
// build compiles po/LANG.po into share/locale/LANG/LC_MESSAGES/DOMAIN.mo in the
// package. i18n.load() reads the catalog of the user's language (navigator.languages,
// which follow LANGUAGE on Ubuntu Touch); until one is loaded, or when there is none,
// i18n.tr() returns the text as written.
"use strict";

const i18n = (function () {
    let messages = new Map(); // msgid (or "context\u0004msgid") -> its translations
    let pluralIndex = (n) => (n === 1 ? 0 : 1); // English, until a catalog says otherwise

    // A compiled catalog: GNU gettext's MO format, little- or big-endian.
    function parse(buffer) {
        const view = new DataView(buffer);
        const magic = view.getUint32(0, true);
        if (magic !== 0x950412de && magic !== 0xde120495) {
            throw new Error("not a gettext catalog (.mo file)");
        }
        const little = magic === 0x950412de;
        const word = (offset) => view.getUint32(offset, little);
        const decoder = new TextDecoder("utf-8");
        const text = (table, i) => decoder.decode(
            new Uint8Array(buffer, word(table + 8 * i + 4), word(table + 8 * i)));
        const count = word(8);
        const found = new Map();
        for (let i = 0; i < count; i++) {
            // "singular\0plural" -> "singular"; the translation: "form0\0form1..."
            found.set(text(word(12), i).split("\0")[0], text(word(16), i).split("\0"));
        }
        return found;
    }

    // The catalog's Plural-Forms rule, e.g. "(n != 1)": a C expression of n only.
    function pluralRule(header) {
        const match = /plural=([^;\n]*)/.exec(header);
        if (!match || !/^[\sn0-9!=<>&|?:%()+\-*/]+$/.test(match[1])) {
            return (n) => (n === 1 ? 0 : 1);
        }
        const rule = new Function("n", "return Number(" + match[1] + ");");
        return (n) => rule(n);
    }

    // Take a compiled catalog (an ArrayBuffer holding a .mo file).
    function use(buffer) {
        messages = parse(buffer);
        pluralIndex = pluralRule((messages.get("") || [""])[0]);
    }

    function lookup(key, fallback, n) {
        const forms = messages.get(key);
        if (!forms) {
            return fallback;
        }
        const form = n === undefined ? forms[0] : forms[pluralIndex(n)];
        return form || fallback;
    }

    // tr(text), or tr(singular, plural, n): as i18n.tr() in QML.
    function tr(text, plural, n) {
        if (plural === undefined) {
            return lookup(text, text);
        }
        return lookup(text, n === 1 ? text : plural, n);
    }

    // ctr(context, text): the same text meaning different things ("Open" a file, "Open" now).
    function ctr(context, text) {
        return lookup(context + "\u0004" + text, text);
    }

    // "de-DE" -> "de_DE", then "de": the names of po/*.po.
    function languages() {
        const tags = typeof navigator === "undefined" ? []
            : navigator.languages || [navigator.language];
        const out = [];
        for (const tag of tags) {
            const parts = String(tag || "").split("-");
            if (parts[0] === "en" || parts[0] === "") {
                break; // the text as written is English
            }
            if (parts.length > 1 && /^[A-Za-z]{2}$/.test(parts[parts.length - 1])) {
                out.push(parts[0] + "_" + parts[parts.length - 1].toUpperCase());
            }
            out.push(parts[0]);
        }
        return [...new Set(out)];
    }

    function read(url) {
        return new Promise((resolve, reject) => {
            const request = new XMLHttpRequest();
            request.open("GET", url);
            request.responseType = "arraybuffer";
            request.onload = () => {
                const body = request.response;
                // file:// answers with status 0
                if ((request.status === 200 || request.status === 0) && body && body.byteLength) {
                    resolve(body);
                } else {
                    reject(new Error(url + ": " + request.status));
                }
            };
            request.onerror = () => reject(new Error(url + ": cannot be read"));
            request.send();
        });
    }

    // Load DOMAIN.mo of the user's first language that has one, from folder (the
    // package's share/locale, seen from the page). Resolves to that language, or null.
    async function load(domain, folder) {
        for (const language of languages()) {
            try {
                use(await read(folder + "/" + language + "/LC_MESSAGES/" + domain + ".mo"));
                return language;
            } catch (error) {
                // no catalog for this language: try the next
            }
        }
        return null;
    }

    return { tr, ctr, load, use, languages };
})();

if (typeof module !== "undefined") {
    module.exports = i18n;
}
