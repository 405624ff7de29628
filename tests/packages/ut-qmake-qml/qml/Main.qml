import QtQuick 2.7
import "components"
import "logic.js" as Logic

Rectangle {
    width: 360; height: 640
    Greeting { anchors.centerIn: parent; text: Logic.greeting() }
}
