/*
 * The main view of the app.
 *
 * MainView's applicationName is the package name: Ubuntu Touch uses it for the
 * app's data and cache folders and as the gettext domain of i18n.tr(), whose
 * translations the build compiles from po/*.po (see README.md).
 */
import QtQuick 2.12
import QtQuick.Window 2.2
import Lomiri.Components 1.3

MainView {
    id: root
    objectName: "mainView"
    applicationName: {{ (cookiecutter.app_name ~ "." ~ cookiecutter.namespace) | tojson }}
    automaticOrientation: true

    width: units.gu(45)
    height: units.gu(75)

    property int taps: 0

    Page {
        id: page
        anchors.fill: parent
        title: i18n.tr({{ cookiecutter.title | tojson }})

        header: PageHeader {
            id: header
            title: page.title
        }

        Column {
            anchors {
                top: header.bottom
                left: parent.left
                right: parent.right
                margins: units.gu(2)
            }
            spacing: units.gu(2)

            Label {
                objectName: "greeting"
                width: parent.width
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.WordWrap
                textSize: Label.Large
                text: root.taps === 0 ? i18n.tr("Hello World!")
                                      : i18n.tr("You tapped %1 time", "You tapped %1 times", root.taps).arg(root.taps)
            }

            Button {
                objectName: "tapButton"
                anchors.horizontalCenter: parent.horizontalCenter
                color: theme.palette.normal.positive
                text: i18n.tr("Tap me")
                onClicked: root.taps += 1
            }
        }
    }

    // The window's title (shown in windowed mode): the page's, in the user's language.
    Binding {
        target: root.Window.window
        property: "title"
        value: page.title
        when: root.Window.window !== null
    }
}
