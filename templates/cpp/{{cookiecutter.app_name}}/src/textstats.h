// TextStats: counts the words and characters of a text; QML binds to it.
#pragma once

#include <QObject>
#include <QString>

class TextStats : public QObject
{
    Q_OBJECT
    Q_PROPERTY(QString text READ text WRITE setText NOTIFY textChanged)
    Q_PROPERTY(int words READ words NOTIFY textChanged)
    Q_PROPERTY(int characters READ characters NOTIFY textChanged)

public:
    using QObject::QObject;

    QString text() const { return m_text; }
    void setText(const QString &text);
    int words() const;
    int characters() const;

signals:
    void textChanged();

private:
    QString m_text;
};
