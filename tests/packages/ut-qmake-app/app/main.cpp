#include <QCoreApplication>
#include <QGuiApplication>
#include <QLocale>
#include <QQuickView>
#include <QTranslator>

int main(int argc, char *argv[])
{
    QGuiApplication app(argc, argv);
    QTranslator translator;
    if (translator.load(QLocale(), "qmakeapp", "_",
                        QCoreApplication::applicationDirPath() + "/translations"))
        app.installTranslator(&translator);
    QQuickView view;
    view.setSource(QUrl("qrc:/qml/Main.qml"));
    view.setResizeMode(QQuickView::SizeRootObjectToView);
    view.show();
    return app.exec();
}
