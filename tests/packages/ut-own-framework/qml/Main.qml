import QtQuick 2.7
import Lomiri.Components 1.3

MainView {
    applicationName: "ownfw.example"
    Label { text: i18n.tr("My own framework") }
}
