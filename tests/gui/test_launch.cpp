// The app's command line: a project given as its argument (folder, project.kfproj or
// project.db, as the desktop entry's %f passes it), paths that are not projects, and the
// application icon found beside the executable.
#include <QtTest>
#include <QtWidgets>

#include <filesystem>

#include "kf/store.h"
#include "launchoptions.h"
#include "mainwindow.h"
#include "project/projectsession.h"
#include "testsupport.h"

using kfgui::LaunchParse;

class TestLaunch : public QObject {
    Q_OBJECT

    static LaunchParse read(const QStringList& args) {
        return kfgui::readLaunchArguments(QStringList{QStringLiteral("kernel-foundry")} + args);
    }
    static QString q(const std::filesystem::path& p) { return QString::fromStdString(p.string()); }

    QString project_;  ///< a project folder (project.kfproj and project.db)
    QString scratch_;  ///< a temporary folder for paths that are not projects

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KernelFoundryTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_launch"));
        const std::filesystem::path root = kftest::temp_dir("gui-launch");
        kf::ProjectStore::create(root / "softmax-runs", "softmax-runs");
        project_ = q(root / "softmax-runs");
        scratch_ = q(root / "scratch");
        QVERIFY(QDir().mkpath(scratch_));
    }

    void projectFromFolderFileOrDatabase_data() {
        QTest::addColumn<QString>("argument");
        QTest::newRow("folder") << project_;
        QTest::newRow("folder with a slash") << project_ + QStringLiteral("/");
        QTest::newRow("project.kfproj") << project_ + QStringLiteral("/project.kfproj");
        QTest::newRow("project.db") << project_ + QStringLiteral("/project.db");
    }
    void projectFromFolderFileOrDatabase() {
        QFETCH(QString, argument);
        const LaunchParse parsed = read({argument});
        QCOMPARE(parsed.action, LaunchParse::Action::Run);
        QCOMPARE(parsed.options.openProject, project_);
        QVERIFY(parsed.options.projectDir.isEmpty());
        QVERIFY(!parsed.options.demo);
    }

    /** A relative path is taken from the working folder. */
    void relativePath() {
        const QString cwd = QDir::currentPath();
        QVERIFY(QDir::setCurrent(project_));
        const LaunchParse parsed = read({QStringLiteral("project.kfproj")});
        QDir::setCurrent(cwd);
        QCOMPARE(parsed.action, LaunchParse::Action::Run);
        QCOMPARE(parsed.options.openProject, project_);
    }

    void notAProject_data() {
        QTest::addColumn<QString>("argument");
        QTest::addColumn<QString>("message");
        QTest::newRow("missing") << scratch_ + QStringLiteral("/nowhere") << QStringLiteral("No such file or folder");
        QTest::newRow("empty folder") << scratch_ << QStringLiteral("no project.kfproj in");
        QTest::newRow("other file") << scratch_ + QStringLiteral("/notes.txt")
                                    << QStringLiteral("give the project's folder");
        QTest::newRow("stray .kfproj") << scratch_ + QStringLiteral("/other.kfproj")
                                       << QStringLiteral("no project.kfproj in");
        QTest::newRow("stray project.db")
            << scratch_ + QStringLiteral("/project.db") << QStringLiteral("no project.kfproj in");
    }
    void notAProject() {
        QFETCH(QString, argument);
        QFETCH(QString, message);
        for (const char* name : {"notes.txt", "other.kfproj", "project.db"}) {
            QFile f(scratch_ + QLatin1Char('/') + QLatin1String(name));
            QVERIFY(f.open(QIODevice::WriteOnly));
        }
        const LaunchParse parsed = read({argument});
        QCOMPARE(parsed.action, LaunchParse::Action::Error);
        QVERIFY2(parsed.text.contains(message), qPrintable(parsed.text));
        QVERIFY2(parsed.text.contains(QDir::toNativeSeparators(argument)), qPrintable(parsed.text));
        QVERIFY(parsed.options.openProject.isEmpty());
    }

    void usageErrors() {
        QCOMPARE(read({project_, project_}).action, LaunchParse::Action::Error);
        QCOMPARE(read({project_, QStringLiteral("--demo")}).action, LaunchParse::Action::Error);
        QCOMPARE(read({QStringLiteral("--project"), scratch_, project_}).action, LaunchParse::Action::Error);
        QCOMPARE(read({QStringLiteral("--no-such-option")}).action, LaunchParse::Action::Error);
        // The other options keep working without a positional argument.
        const LaunchParse demo = read({QStringLiteral("--demo")});
        QCOMPARE(demo.action, LaunchParse::Action::Run);
        QVERIFY(demo.options.demo);
        QVERIFY(demo.options.openProject.isEmpty());
    }

    void helpDocumentsTheArgument() {
        const LaunchParse parsed = read({QStringLiteral("--help")});
        QCOMPARE(parsed.action, LaunchParse::Action::Help);
        QVERIFY2(parsed.text.contains(QStringLiteral("[project]")), qPrintable(parsed.text));
        QVERIFY2(parsed.text.contains(QStringLiteral("project.kfproj")), qPrintable(parsed.text));
        QVERIFY2(parsed.text.contains(QStringLiteral("project.db")), qPrintable(parsed.text));
        // --help-all (Qt's options too) is not mistaken for a run.
        QCOMPARE(read({QStringLiteral("--help-all")}).action, LaunchParse::Action::HelpAll);
    }

    /** The window opens the project named by the argument, without creating anything. */
    void windowOpensTheArgument() {
        const LaunchParse parsed = read({project_ + QStringLiteral("/project.kfproj")});
        QCOMPARE(parsed.action, LaunchParse::Action::Run);
        kfgui::MainWindow window(parsed.options);
        QVERIFY(window.session()->isOpen());
        QCOMPARE(window.session()->dir(), project_);
        QVERIFY(window.windowTitle().contains(QDir::toNativeSeparators(project_)));
    }

    /** The real executable: what the desktop entry runs. */
    void executableRefusesAPathThatIsNotAProject() {
        const QString exe = q(kftest::bin_dir() / "kernel-foundry");
        QVERIFY2(QFileInfo(exe).isExecutable(), "build the kernel-foundry target first");
        QProcess app;
        app.setProcessChannelMode(QProcess::SeparateChannels);
        app.start(exe, {scratch_ + QStringLiteral("/nowhere.kfproj")});
        QVERIFY(app.waitForFinished(60000));
        QCOMPARE(app.exitStatus(), QProcess::NormalExit);
        QCOMPARE(app.exitCode(), 2);
        const QString err = QString::fromUtf8(app.readAllStandardError());
        QVERIFY2(err.contains(QStringLiteral("No such file or folder")), qPrintable(err));

        app.start(exe, {QStringLiteral("--help")});
        QVERIFY(app.waitForFinished(60000));
        QCOMPARE(app.exitCode(), 0);
        const QString help = QString::fromUtf8(app.readAllStandardOutput());
        QVERIFY2(help.contains(QStringLiteral("project.kfproj")), qPrintable(help));

        app.start(exe, {QStringLiteral("--help-all")});
        QVERIFY(app.waitForFinished(60000));
        QCOMPARE(app.exitCode(), 0);
        const QString helpAll = QString::fromUtf8(app.readAllStandardOutput());
        QVERIFY2(helpAll.contains(QStringLiteral("-platform")), qPrintable(helpAll));
    }

    /** The icon is found in a build tree and in the installed layout, and renders. */
    void applicationIcon() {
        const QString inBuild = kfgui::resolveIconFile(q(kftest::bin_dir()));
        QCOMPARE(inBuild, QDir::cleanPath(q(kftest::source_dir() / "resources" / "icons") +
                                          QStringLiteral("/io.github.kernelfoundry.KernelFoundry.svg")));
        const QIcon icon(inBuild);
        QVERIFY2(!icon.pixmap(64, 64).isNull(), "the SVG icon does not render (is libqt6svg6 installed?)");
        // Some pixels are drawn, some are transparent (the corners between the pins).
        const QImage image = icon.pixmap(64, 64).toImage().convertToFormat(QImage::Format_ARGB32);
        QCOMPARE(qAlpha(image.pixel(0, 0)), 0);
        QVERIFY(qAlpha(image.pixel(32, 32)) > 0);

        // Installed: <prefix>/bin next to <prefix>/share/icons/hicolor/scalable/apps.
        const QString prefix = scratch_ + QStringLiteral("/prefix");
        const QString apps = prefix + QStringLiteral("/share/icons/hicolor/scalable/apps");
        QVERIFY(QDir().mkpath(prefix + QStringLiteral("/bin")));
        QVERIFY(QDir().mkpath(apps));
        const QString installed = apps + QStringLiteral("/io.github.kernelfoundry.KernelFoundry.svg");
        QVERIFY(QFile::copy(inBuild, installed));
        QCOMPARE(kfgui::resolveIconFile(prefix + QStringLiteral("/bin")), installed);
        QVERIFY(kfgui::resolveIconFile(scratch_).isEmpty());
    }
};

QTEST_MAIN(TestLaunch)
#include "test_launch.moc"
