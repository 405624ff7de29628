/*
 * The main view of the app: QML draws it, Python (src/) does the work.
 *
 * MainView's applicationName is the package name: Ubuntu Touch uses it for the
 * app's data and cache folders and as the gettext domain of i18n.tr(), whose
 * translations the build compiles from po/*.po (see README.md); the Python side
 * uses the same domain and folder with gettext.
 */
import QtQuick 2.12
import QtQuick.Window 2.2
import Lomiri.Components 1.3
import io.thp.pyotherside 1.4

MainView {
    id: root
    objectName: "mainView"
    applicationName: {{ (cookiecutter.app_name ~ "." ~ cookiecutter.namespace) | tojson }}
    automaticOrientation: true

    width: units.gu(45)
    height: units.gu(75)

    property string greeting: ""
    property int words: 0
    property int characters: 0

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
                text: root.greeting || i18n.tr("Starting Python…")
            }

            TextField {
                objectName: "input"
                width: parent.width
                placeholderText: i18n.tr("Type something")
                onTextChanged: python.describe(text)
            }

            Label {
                objectName: "counts"
                width: parent.width
                text: i18n.tr("%1 word", "%1 words", root.words).arg(root.words) + " · "
                      + i18n.tr("%1 character", "%1 characters", root.characters).arg(root.characters)
            }
        }
    }

    Python {
        id: python

        function describe(text) {
            call({{ (cookiecutter.__module ~ ".describe") | tojson }}, [text], function(result) {
                root.words = result.words;
                root.characters = result.characters;
            });
        }

        Component.onCompleted: {
            // Installed: the Python code is in lib/python3/dist-packages of the
            // package; from the source tree (qmlscene, tests) it is in src/.
            addImportPath(Qt.resolvedUrl("../lib/python3/dist-packages"));
            addImportPath(Qt.resolvedUrl("../src"));
            importModule({{ cookiecutter.__module | tojson }}, function() {
                call({{ (cookiecutter.__module ~ ".greeting") | tojson }}, [], function(text) {
                    root.greeting = text;
                });
            });
        }

        onError: console.log("Python error: " + traceback)
    }

    // The window's title (shown in windowed mode): the page's, in the user's language.
    Binding {
        target: root.Window.window
        property: "title"
        value: page.title
        when: root.Window.window !== null
    }
}
