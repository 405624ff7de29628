#include "textstats.h"

void TextStats::setText(const QString &text)
{
    if (text == m_text)
        return;
    m_text = text;
    emit textChanged();
}

int TextStats::words() const
{
    int count = 0;
    bool inWord = false;
    for (const QChar c : m_text) {
        if (c.isSpace()) {
            inWord = false;
        } else if (!inWord) {
            inWord = true;
            ++count;
        }
    }
    return count;
}

int TextStats::characters() const
{
    // Characters as people count them: a surrogate pair (an emoji) is one.
    return m_text.toUcs4().size();
}
