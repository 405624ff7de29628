import QtQuick 2.7

Rectangle {
    width: 360; height: 640
    Text {
        anchors.centerIn: parent
        text: qsTr("Hello from qmake")
    }
}
