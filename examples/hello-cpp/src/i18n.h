// I18n: the "i18n" object QML sees, a gettext-backed stand-in for the one
// Lomiri.Components provides on the phone (i18n.tr("...")).
#pragma once

#include <QObject>
#include <QString>

#include <libintl.h>

class I18n : public QObject
{
    Q_OBJECT

public:
    using QObject::QObject;

    Q_INVOKABLE QString tr(const QString &text) const
    {
        return QString::fromUtf8(gettext(text.toUtf8().constData()));
    }
};
