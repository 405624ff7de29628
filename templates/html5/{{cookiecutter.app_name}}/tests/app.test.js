// Tests of www/js/app.js and www/js/i18n.js. Run them from the project folder with
//     node --test tests/
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const { greetingText } = require("../www/js/app.js");
const i18n = require("../www/js/i18n.js");

test("greets before the first tap", () => {
    assert.strictEqual(greetingText(0, i18n.tr), "Hello World!");
});

test("counts taps with the right plural", () => {
    assert.strictEqual(greetingText(1, i18n.tr), "You tapped 1 time");
    assert.strictEqual(greetingText(2, i18n.tr), "You tapped 2 times");
});

test("shows what the translation gives", () => {
    const german = (text, plural, n) => (plural === undefined ? "Hallo Welt!"
        : n === 1 ? "%1-mal getippt" : "%1-mal getippt");
    assert.strictEqual(greetingText(0, german), "Hallo Welt!");
    assert.strictEqual(greetingText(3, german), "3-mal getippt");
});
