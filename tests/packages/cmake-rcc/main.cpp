#include <QDateTime>
#include <QFile>
#include <QFileInfo>
#include <cstdio>

int main() {
    QFile greeting(":/greeting.txt");
    if (!greeting.open(QIODevice::ReadOnly))
        return 1;
    std::fputs(greeting.readAll().constData(), stdout);
    std::printf("%lld\n", static_cast<long long>(
        QFileInfo(":/greeting.txt").lastModified().toSecsSinceEpoch()));
    return 0;
}
