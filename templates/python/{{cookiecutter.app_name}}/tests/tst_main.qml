// A QtTest test of the whole app: the QML page calling the Python code in src/.
// Run it from the project folder with
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

        function test_python_answers() {
            var greeting = findChild(main, "greeting")
            tryVerify(function() { return greeting.text.indexOf("Hello from Python 3.") === 0 },
                      5000, "the Python side started")
            var input = findChild(main, "input")
            var counts = findChild(main, "counts")
            input.text = "hello Ubuntu Touch"
            tryCompare(counts, "text", "3 words · 18 characters", 5000)
        }
    }
}
