import QtQuick 2.7
import Lomiri.Components 1.3

MainView {
    applicationName: "clickqml.example"
    Label { text: i18n.tr("Built the way Clickable builds it") }
}
