/*
 * The main view of the app: QML draws it, C++ (src/) does the work.
 *
 * MainView's applicationName is the package name: Ubuntu Touch uses it for the
 * app's data and cache folders and as the gettext domain of i18n.tr(), whose
 * translations the build compiles from po/*.po (see README.md).
 */
import QtQuick 2.12
import QtQuick.Window 2.2
import Lomiri.Components 1.3
import TextStats 1.0

MainView {
    id: root
    objectName: "mainView"
    applicationName: {{ (cookiecutter.app_name ~ "." ~ cookiecutter.namespace) | tojson }}
    automaticOrientation: true

    width: units.gu(45)
    height: units.gu(75)

    TextStats {
        id: stats
        text: input.text
    }

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
                wrapMode: Text.WordWrap
                textSize: Label.Large
                text: i18n.tr("Hello from C++!")
            }

            TextField {
                id: input
                objectName: "input"
                width: parent.width
                placeholderText: i18n.tr("Type something")
            }

            Label {
                objectName: "counts"
                width: parent.width
                text: i18n.tr("%1 word", "%1 words", stats.words).arg(stats.words) + " · "
                      + i18n.tr("%1 character", "%1 characters", stats.characters).arg(stats.characters)
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
