// Tests of TextStats (Qt Test). Built with the app; run them with
//     ctest --test-dir build
#include <QSignalSpy>
#include <QtTest>

#include "../src/textstats.h"

class TestTextStats : public QObject
{
    Q_OBJECT

private slots:
    void countsWordsAndCharacters()
    {
        TextStats stats;
        QSignalSpy changed(&stats, &TextStats::textChanged);
        QCOMPARE(stats.words(), 0);
        stats.setText(QStringLiteral("hello  Ubuntu Touch"));
        QCOMPARE(stats.words(), 3);
        QCOMPARE(stats.characters(), 19);
        QCOMPARE(changed.count(), 1);
    }

    void countsAnEmojiAsOneCharacter()
    {
        TextStats stats;
        stats.setText(QString::fromUtf8("\xF0\x9F\x99\x82"));
        QCOMPARE(stats.characters(), 1);
    }
};

QTEST_APPLESS_MAIN(TestTextStats)
#include "tst_textstats.moc"
