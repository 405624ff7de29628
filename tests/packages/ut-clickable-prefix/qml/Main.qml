import QtQuick 2.7
import Lomiri.Components 1.3

MainView {
    applicationName: "prefixapp.example"
    Label { text: i18n.tr("Hello") }
}
