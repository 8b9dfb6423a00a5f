// The packaging files: the desktop entry opens the file it is given and declares the project
// MIME type, the icon and screenshots it names exist, and every program has a manual page,
// installed, that documents every long option its --help prints.
#include <QtTest>

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>

#include <filesystem>

#include "testsupport.h"

namespace {

const QString kAppId = QStringLiteral("io.github.kernelfoundry.KernelFoundry");

QString q(const std::filesystem::path& p) {
    return QString::fromStdString(p.string());
}
QString source(const QString& relative) {
    return q(kftest::source_dir()) + QLatin1Char('/') + relative;
}
QString readText(const QString& path) {
    return QString::fromStdString(kftest::read_file(path.toStdString()));
}

/** The value of `key=` in a desktop entry's main group (empty when missing). */
QString desktopValue(const QString& entry, const QString& key) {
    const QRegularExpression line(QStringLiteral("^%1=(.*)$").arg(QRegularExpression::escape(key)),
                                  QRegularExpression::MultilineOption);
    const auto m = line.match(entry);
    return m.hasMatch() ? m.captured(1).trimmed() : QString();
}

/** Runs `program args`; stdout and stderr together. */
QString run(const QString& program, const QStringList& args) {
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(program, args);
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
    }
    return QString::fromUtf8(p.readAll());
}

/** The long options (--name) a help text mentions. */
QSet<QString> longOptions(const QString& help) {
    QSet<QString> out;
    static const QRegularExpression option(QStringLiteral("(?<![\\w-])--[a-z][a-z0-9-]*[a-z0-9]"));
    for (auto it = option.globalMatch(help); it.hasNext();) out.insert(it.next().captured(0));
    return out;
}

/** The subcommands a CLI11 help text lists under "Subcommands:". */
QStringList subcommands(const QString& help) {
    QStringList out;
    const qsizetype start = help.indexOf(QStringLiteral("\nSubcommands:\n"));
    if (start < 0) return out;
    static const QRegularExpression item(QStringLiteral("^  ([a-z][a-z0-9-]*)\\b"));
    const QStringList lines = help.mid(start + 14).split(QLatin1Char('\n'));
    for (const QString& line : lines) {
        if (!line.isEmpty() && !line.startsWith(QLatin1Char(' '))) break;  // the next section
        const auto m = item.match(line);
        if (m.hasMatch()) out << m.captured(1);
    }
    return out;
}

/** Every long option of `program`'s help, following CLI11 subcommands ("sub --help"). */
QSet<QString> allLongOptions(const QString& program, const QStringList& path = {}) {
    const QString help = run(program, path + QStringList{QStringLiteral("--help")});
    QSet<QString> options = longOptions(help);
    for (const QString& sub : subcommands(help)) options.unite(allLongOptions(program, path + QStringList{sub}));
    return options;
}

/** A roff page as plain text: "\-" is "-", font changes and other escapes dropped. */
QString manText(const QString& roff) {
    QString text = roff;
    text.replace(QStringLiteral("\\-"), QStringLiteral("-"));
    static const QRegularExpression font(QStringLiteral("\\\\f[BIRP]"));
    text.remove(font);
    return text;
}

bool mentions(const QString& text, const QString& option) {
    const QRegularExpression word(QStringLiteral("(?<![\\w-])%1(?![\\w-])").arg(QRegularExpression::escape(option)));
    return word.match(text).hasMatch();
}

}  // namespace

class TestPackaging : public QObject {
    Q_OBJECT

private slots:
    void desktopEntryOpensAProjectFile() {
        const QString entry = readText(source(QStringLiteral("packaging/%1.desktop").arg(kAppId)));
        const QString exec = desktopValue(entry, QStringLiteral("Exec"));
        // One file (%f): the app takes one project. %F would pass several, which it refuses.
        QCOMPARE(exec, QStringLiteral("kernel-foundry %f"));
        const QStringList mime =
            desktopValue(entry, QStringLiteral("MimeType")).split(QLatin1Char(';'), Qt::SkipEmptyParts);
        QVERIFY2(mime.contains(QStringLiteral("application/x-kernel-foundry-project")), qPrintable(entry));

        // The MIME type is defined for *.kfproj, and the package installs the definition.
        const QString types = readText(source(QStringLiteral("packaging/%1.mime.xml").arg(kAppId)));
        QVERIFY(types.contains(QStringLiteral("<mime-type type=\"application/x-kernel-foundry-project\">")));
        QVERIFY(types.contains(QStringLiteral("<glob pattern=\"*.kfproj\"/>")));
        const QString rules = readText(source(QStringLiteral("packaging/CMakeLists.txt")));
        QVERIFY(rules.contains(QStringLiteral("mime/packages")));
        QVERIFY(rules.contains(QStringLiteral("icons/hicolor/scalable/apps")));
    }

    void iconExists() {
        const QString entry = readText(source(QStringLiteral("packaging/%1.desktop").arg(kAppId)));
        QCOMPARE(desktopValue(entry, QStringLiteral("Icon")), kAppId);
        const QString icon = source(QStringLiteral("resources/icons/%1.svg").arg(kAppId));
        QVERIFY2(QFileInfo(icon).isFile(), qPrintable(icon));
        const QString svg = readText(icon);
        QVERIFY(svg.contains(QStringLiteral("<svg")));
        QVERIFY(svg.contains(QStringLiteral("viewBox=\"0 0 128 128\"")));
    }

    /** The metainfo shows only screenshots the repository has. */
    void metainfoScreenshotsExist() {
        const QString metainfo = readText(source(QStringLiteral("packaging/%1.metainfo.xml").arg(kAppId)));
        static const QRegularExpression image(QStringLiteral("<image>[^<]*/docs/screenshots/([^<]+)</image>"));
        int count = 0;
        for (auto it = image.globalMatch(metainfo); it.hasNext(); ++count) {
            const QString file = source(QStringLiteral("docs/screenshots/") + it.next().captured(1));
            QVERIFY2(QFileInfo(file).isFile(),
                     qPrintable(file + QStringLiteral(" is named in the metainfo but missing")));
        }
        QCOMPARE(count, int(metainfo.count(QStringLiteral("<image"))));
        QVERIFY(!metainfo.contains(QStringLiteral("preview"), Qt::CaseInsensitive));
    }

    /**
     * Every program the build makes has packaging/man/<program>.1, installed, mentioning each
     * long option its --help prints: an option added without documentation fails here.
     */
    void manPagesDocumentEveryOption() {
        QStringList programs{QStringLiteral("kfoundry"), QStringLiteral("kfoundry-worker")};
        const QDir bin(q(kftest::bin_dir()));
        for (const QFileInfo& f : bin.entryInfoList(QDir::Files | QDir::Executable))
            if (!programs.contains(f.fileName())) programs << f.fileName();
        const QString rules = readText(source(QStringLiteral("packaging/CMakeLists.txt")));
        for (const QString& program : programs) {
            const QString page = source(QStringLiteral("packaging/man/%1.1").arg(program));
            QVERIFY2(QFileInfo(page).isFile(), qPrintable(QStringLiteral("no manual page for ") + program));
            QVERIFY2(rules.contains(QStringLiteral("man/%1.1").arg(program)),
                     qPrintable(QStringLiteral("packaging/CMakeLists.txt does not install ") + page));
            const QString text = manText(readText(page));
            QVERIFY2(text.contains(QStringLiteral(".TH ") + program.toUpper()), qPrintable(page));

            const QString exe = bin.filePath(program);
            QVERIFY2(QFileInfo(exe).isExecutable(), qPrintable(exe + QStringLiteral(" is not built")));
            const QSet<QString> options = allLongOptions(exe);
            QVERIFY2(!options.isEmpty(), qPrintable(program + QStringLiteral(" --help printed no option")));
            QStringList missing;
            for (const QString& option : options)
                if (!mentions(text, option)) missing << option;
            missing.sort();
            QVERIFY2(
                missing.isEmpty(),
                qPrintable(QStringLiteral("%1 does not document %2").arg(page, missing.join(QStringLiteral(", ")))));
        }
    }

    /** The helpers above: what the manual page check relies on. */
    void helpParsing() {
        const QString cli11 = QStringLiteral(
            "Usage: kfoundry [OPTIONS] SUBCOMMAND\n\nOptions:\n  -h,--help   Print this help\n"
            "  --worker TEXT  kfoundry-worker executable\n\nSubcommands:\n  tasks   Bundled tasks\n"
            "  device  The evaluation device\n\nFooter text\n");
        QCOMPARE(subcommands(cli11), (QStringList{QStringLiteral("tasks"), QStringLiteral("device")}));
        QCOMPARE(longOptions(cli11), (QSet<QString>{QStringLiteral("--help"), QStringLiteral("--worker")}));
        QVERIFY(!longOptions(QStringLiteral("a-- b ---x")).contains(QStringLiteral("--x")));
        const QString page = manText(QStringLiteral(".BI \\-\\-min\\-time \" MS\"\n.BR \\-\\-help\\fR,\n"));
        QVERIFY(mentions(page, QStringLiteral("--min-time")));
        QVERIFY(mentions(page, QStringLiteral("--help")));
        QVERIFY(!mentions(page, QStringLiteral("--min")));
        QVERIFY(!mentions(page, QStringLiteral("--time")));
    }
};

QTEST_GUILESS_MAIN(TestPackaging)
#include "test_packaging.moc"
