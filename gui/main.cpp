// kernel-foundry: the desktop application.
#include <QApplication>
#include <QIcon>
#include <QLibraryInfo>
#include <QLocale>
#include <QTimer>
#include <QTranslator>

#include "launchoptions.h"
#include "mainwindow.h"
#include "preferences.h"

namespace {

void installTranslations(QApplication& app) {
    // Settings › Interface › Language; empty follows the system locale.
    const QString language = kfgui::prefs::language.get();
    const QLocale locale = language.isEmpty() ? QLocale() : QLocale(language);
    if (!language.isEmpty()) QLocale::setDefault(locale);
    auto* qt = new QTranslator(&app);
    if (qt->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"),
                 QLibraryInfo::path(QLibraryInfo::TranslationsPath)))
        QApplication::installTranslator(qt);
    auto* ours = new QTranslator(&app);
    if (ours->load(locale, QStringLiteral("kernel-foundry"), QStringLiteral("_"), QStringLiteral(":/i18n")))
        QApplication::installTranslator(ours);
}

}  // namespace

int main(int argc, char* argv[]) {
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("KernelFoundry"));
    QApplication::setOrganizationDomain(QStringLiteral("kernelfoundry.github.io"));
    QApplication::setApplicationName(QStringLiteral("kernel-foundry"));
    QApplication::setApplicationDisplayName(QStringLiteral("Kernel Foundry"));
    QApplication::setApplicationVersion(QStringLiteral(KF_VERSION));
    QApplication::setDesktopFileName(QLatin1String(kfgui::kApplicationId));
    // The installed hicolor icon (or the repository's in a build tree); the theme's otherwise.
    const QString iconFile = kfgui::resolveIconFile(QApplication::applicationDirPath());
    QApplication::setWindowIcon(iconFile.isEmpty() ? QIcon::fromTheme(QLatin1String(kfgui::kApplicationId))
                                                   : QIcon(iconFile));
    installTranslations(app);

    const kfgui::LaunchOptions options = kfgui::parseLaunchOptions(QApplication::arguments());
    kfgui::MainWindow window(options);
    window.show();

    if (!options.screenshot.isEmpty()) {
        // Give the window one turn of the event loop to lay itself out before grabbing it.
        QTimer::singleShot(500, &window, [&window, &options] {
            const bool saved = window.grab().save(options.screenshot);
            QApplication::exit(saved ? 0 : 1);
        });
    }
    return QApplication::exec();
}
