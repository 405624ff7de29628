import QtQuick 2.7
import QtQuick.Window 2.2
import Hello 1.0

// Real Ubuntu Touch apps use Lomiri.Components (MainView, Page); plain
// QtQuick keeps this example runnable on any machine with Qt 5.
Window {
    // Read by `hello-cpp --self-test`.
    property string greeting: label.text

    title: appTitle
    width: 360
    height: 640
    visible: true

    Greeting {
        id: label
        anchors.centerIn: parent
    }
}
