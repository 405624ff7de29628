import QtQuick 2.7
import Lomiri.Components 1.3
import io.thp.pyotherside 1.4

MainView {
    applicationName: "hello-python.clickbuild"
    width: units.gu(45)
    height: units.gu(75)

    Page {
        header: PageHeader { title: i18n.tr("Hello Python") }
        Label {
            id: greeting
            anchors.centerIn: parent
        }
    }

    Python {
        Component.onCompleted: {
            // The app's module and its vendored dependencies live here.
            addImportPath(Qt.resolvedUrl("../lib/python3/dist-packages"));
            importModule("hello", function() {
                call("hello.greeting", ["Ubuntu Touch"], function(text) { greeting.text = text; });
            });
        }
        onError: console.log("python error: " + traceback)
    }
}
