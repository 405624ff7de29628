// A QtTest test of the main view. Run it from the project folder with
//     qmltestrunner -input tests
// (on a machine without a display: xvfb-run -a qmltestrunner -input tests).
import QtQuick 2.12
import QtTest 1.2
import "../qml"

Item {
    width: 360
    height: 640

    Main {
        id: main
        anchors.fill: parent
    }

    TestCase {
        name: "Main"
        when: windowShown

        function test_greeting_counts_taps() {
            var greeting = findChild(main, "greeting")
            var button = findChild(main, "tapButton")
            verify(greeting !== null, "the greeting label exists")
            verify(button !== null, "the tap button exists")
            compare(greeting.text, "Hello World!")
            mouseClick(button)
            compare(greeting.text, "You tapped 1 time")
            mouseClick(button)
            compare(greeting.text, "You tapped 2 times")
        }
    }
}
