import QtQuick 2.7
import Lomiri.Components 1.3

MainView {
    applicationName: "hello-qml.clickbuild"
    width: units.gu(45)
    height: units.gu(75)

    Page {
        header: PageHeader { title: i18n.tr("Hello QML") }
        Label {
            anchors.centerIn: parent
            text: i18n.tr("Hello, world!")
        }
    }
}
