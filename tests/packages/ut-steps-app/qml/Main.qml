import QtQuick 2.7
import "BuildInfo.js" as BuildInfo

Rectangle {
    width: 360; height: 640
    Text { anchors.centerIn: parent; text: "Flavour: " + BuildInfo.flavour }
}
