// Tests of www/js/app.js. Run them from the project folder with
//     node --test tests/
"use strict";

const test = require("node:test");
const assert = require("node:assert");
const { greetingText } = require("../www/js/app.js");

const texts = {
    zero: "Hello World!",
    one: "You tapped %1 time",
    many: "You tapped %1 times",
};

test("greets before the first tap", () => {
    assert.strictEqual(greetingText(0, texts), "Hello World!");
});

test("counts taps with the right plural", () => {
    assert.strictEqual(greetingText(1, texts), "You tapped 1 time");
    assert.strictEqual(greetingText(2, texts), "You tapped 2 times");
});
