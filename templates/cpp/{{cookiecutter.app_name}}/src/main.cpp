// The app's entry point: registers the C++ types for QML and shows qml/Main.qml.
#include <QDir>
#include <QGuiApplication>
#include <QQuickView>
#include <QUrl>
#include <QtQml>

#include "textstats.h"

int main(int argc, char *argv[])
{
    QGuiApplication app(argc, argv);
    // The package name: Ubuntu Touch keys the app's data folders and its
    // gettext domain (i18n.tr() in QML) on it.
    QCoreApplication::setApplicationName(QStringLiteral(APP_ID));

    qmlRegisterType<TextStats>("TextStats", 1, 0, "TextStats");

    QQuickView view;
    view.setResizeMode(QQuickView::SizeRootObjectToView);
    const QString qmlDir = QDir::cleanPath(app.applicationDirPath() + "/" QML_FROM_BIN);
    view.setSource(QUrl::fromLocalFile(qmlDir + "/Main.qml"));
    if (view.status() == QQuickView::Error)
        return 1;
    view.show();
    return app.exec();
}
