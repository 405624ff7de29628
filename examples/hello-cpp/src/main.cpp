// hello-cpp: a Qt Quick app with a C++ core, packaged as a .click by ClickBuild.
//
// The paths below come from CMakeLists.txt (the CLICK_INSTALL_* variables), so
// the same code runs from the package on the phone and from a desktop install.
#include <QDir>
#include <QFile>
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQmlContext>
#include <QUrl>

#include <clocale>
#include <cstdio>
#include <libintl.h>

#include "i18n.h"

#define _(text) gettext(text)

// The package root: $APP_DIR on the phone, else found from the executable.
static QString packageRoot()
{
    const QByteArray appDir = qgetenv("APP_DIR");
    if (!appDir.isEmpty())
        return QString::fromLocal8Bit(appDir);
    return QDir::cleanPath(QCoreApplication::applicationDirPath() + "/" HELLO_ROOT_FROM_BIN);
}

int main(int argc, char *argv[])
{
    QGuiApplication app(argc, argv);
    app.setApplicationName(QStringLiteral(HELLO_DOMAIN));
    const QString root = packageRoot();

    std::setlocale(LC_ALL, "");
    bindtextdomain(HELLO_DOMAIN, QFile::encodeName(root + "/" HELLO_LOCALE_DIR).constData());
    bind_textdomain_codeset(HELLO_DOMAIN, "UTF-8");
    textdomain(HELLO_DOMAIN);

    I18n i18n;
    QQmlApplicationEngine engine;
    engine.addImportPath(root + "/" HELLO_QML_DIR);
    engine.rootContext()->setContextProperty(QStringLiteral("i18n"), &i18n);
    engine.rootContext()->setContextProperty(QStringLiteral("appTitle"),
                                             QString::fromUtf8(_("Hello from C++")));
    engine.load(QUrl::fromLocalFile(root + "/" HELLO_DATA_DIR "/qml/Main.qml"));
    if (engine.rootObjects().isEmpty())
        return 1;

    if (app.arguments().contains(QStringLiteral("--self-test"))) {
        // Print the title and the greeting, then quit: lets CI run the packaged app.
        const QObject *window = engine.rootObjects().constFirst();
        std::printf("%s\n%s\n", qPrintable(window->property("title").toString()),
                    qPrintable(window->property("greeting").toString()));
        return 0;
    }
    return app.exec();
}
