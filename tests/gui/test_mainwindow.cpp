// The main window's task browser, offscreen: a valid and a malformed task side by side.
#include <QtTest>
#include <QtWidgets>

#include "guiproject.h"
#include "mainwindow.h"
#include "runs/niceaxis.h"
#include "runs/searchview.h"
#include "taskbrowser.h"
#include "tasklistmodel.h"
#include "testsupport.h"

namespace {

const char* kValidManifest = R"({
  "format": 1,
  "name": "vec_add",
  "title": "Vector add",
  "description": "c[i] = a[i] + b[i]",
  "op_class": "elementwise",
  "sizes": ["n"],
  "tensors": [
    {"name": "a", "role": "input", "dtype": "f32", "shape": ["n"]},
    {"name": "b", "role": "input", "dtype": "f32", "shape": ["n"]},
    {"name": "c", "role": "output", "dtype": "f32", "shape": ["n"]}
  ],
  "tolerance": {"atol": 1e-6, "rtol": 1e-6},
  "work": {"flops": "n", "bytes": "12 * n"},
  "cases": [
    {"name": "primary", "primary": true, "sizes": {"n": 1048576}},
    {"name": "odd", "sizes": {"n": 1001}}
  ],
  "reference": {"cuda": "reference.cu", "host": "reference.cpp"}
}
)";

const char* kCudaReference =
    "__global__ void add(const float* a, const float* b, float* c, int n) {\n"
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n"
    "extern \"C\" void kf_solve(const float* a, const float* b, float* c, int n, cudaStream_t stream) {\n"
    "    add<<<(n + 255) / 256, 256, 0, stream>>>(a, b, c, n);\n"
    "}\n";

const char* kHostReference =
    "extern \"C\" void kf_solve(const float* a, const float* b, float* c, int n) {\n"
    "    for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];\n"
    "}\n";

}  // namespace

class TestMainWindow : public QObject {
    Q_OBJECT

private slots:
    /** The live charts' axes end on round numbers with round steps. */
    void chartAxesEndOnRoundNumbers() {
        QCOMPARE(kfgui::niceAxisMax(1.5, 4, false), 2.0);     // 0, 0.5, 1, 1.5, 2
        QCOMPARE(kfgui::niceAxisMax(1.848, 4, false), 2.0);
        QCOMPARE(kfgui::niceAxisMax(2.2, 4, false), 4.0);     // steps of 1
        QCOMPARE(kfgui::niceAxisMax(10.7, 4, false), 20.0);   // steps of 5
        QCOMPARE(kfgui::niceAxisMax(0.9, 4, false), 1.0);     // steps of 0.25
        QCOMPARE(kfgui::niceAxisMax(10, 5, true), 10.0);      // 0, 2, ..., 10
        QCOMPARE(kfgui::niceAxisMax(11, 5, true), 25.0);      // steps of 5: no 2.5 for counts
        QCOMPARE(kfgui::niceAxisMax(37, 5, true), 50.0);
        QCOMPARE(kfgui::niceAxisMax(3, 5, true), 5.0);        // whole steps, at least 1
        QCOMPARE(kfgui::niceAxisMax(1200, 5, true), 2500.0);  // steps of 500
        QCOMPARE(kfgui::niceAxisMax(0, 5, true), 5.0);
    }

    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        QCoreApplication::setOrganizationName(QStringLiteral("KernelFoundryTest"));
        QCoreApplication::setApplicationName(QStringLiteral("test_mainwindow"));
        // The app's experience library lives under XDG_DATA_HOME: the user's own is not read.
        qputenv("XDG_DATA_HOME", QByteArray::fromStdString(kftest::temp_dir("gui-mainwindow-data").string()));
        root_ = QString::fromStdString(kftest::temp_dir("gui-tasks").string());
        const std::filesystem::path base = root_.toStdString();
        kftest::write_file(base / "a_valid" / "task.json", kValidManifest);
        kftest::write_file(base / "a_valid" / "reference.cu", kCudaReference);
        kftest::write_file(base / "a_valid" / "reference.cpp", kHostReference);
        kftest::write_file(base / "b_broken" / "task.json", "{\"format\": 1, \"name\": \"broken\",");
    }

    void listsValidAndMalformedTasks() {
        const QString project = QString::fromStdString((kftest::temp_dir("gui-project") / "my-project").string());
        kfgui::MainWindow window(kfgui::LaunchOptions{root_, project, {}});
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        QVERIFY(window.windowTitle().contains(QStringLiteral("my-project")));
        // --project creates the project when the folder holds none.
        QVERIFY(QFileInfo::exists(project + QStringLiteral("/project.kfproj")));

        auto* list = window.findChild<QListView*>(QStringLiteral("taskList"));
        QVERIFY(list);
        QAbstractItemModel* model = list->model();
        QCOMPARE(model->rowCount(), 2);

        const QModelIndex valid = model->index(0, 0);
        const QModelIndex broken = model->index(1, 0);
        QCOMPARE(model->data(valid).toString(), QStringLiteral("a_valid"));
        QVERIFY(model->data(valid, kfgui::TaskListModel::ErrorRole).toString().isEmpty());

        // The malformed task stays in the list, in red, with the loader's message.
        QVERIFY(model->data(broken).toString().startsWith(QStringLiteral("b_broken")));
        const QString error = model->data(broken, kfgui::TaskListModel::ErrorRole).toString();
        QVERIFY2(error.contains(QStringLiteral("not valid JSON")), qPrintable(error));
        QVERIFY(model->data(broken).toString().contains(QStringLiteral("not valid JSON")));
        const QColor red = model->data(broken, Qt::ForegroundRole).value<QBrush>().color();
        QVERIFY(red.red() > 150 && red.green() < 100 && red.blue() < 100);
        QVERIFY(!model->data(valid, Qt::ForegroundRole).isValid());

        QVERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("1 failed")));

        // The first task that loaded is selected on start; select the broken one and back.
        auto* header = window.findChild<QPlainTextEdit*>(QStringLiteral("entryHeader"));
        auto* title = window.findChild<QLabel*>(QStringLiteral("taskTitle"));
        auto* description = window.findChild<QLabel*>(QStringLiteral("taskDescription"));
        QVERIFY(header && title && description);
        list->setCurrentIndex(broken);
        QVERIFY(header->toPlainText().isEmpty());
        QVERIFY(description->text().contains(QStringLiteral("not valid JSON")));

        list->setCurrentIndex(valid);
        QVERIFY2(header->toPlainText().contains(QStringLiteral("kf_solve")), qPrintable(header->toPlainText()));
        QVERIFY(header->isReadOnly());
        QCOMPARE(title->text(), QStringLiteral("Vector add"));
        QCOMPARE(description->text(), QStringLiteral("c[i] = a[i] + b[i]"));
        auto* reference = window.findChild<QPlainTextEdit*>(QStringLiteral("cudaReference"));
        QVERIFY(reference && reference->toPlainText().contains(QStringLiteral("__global__")));
        auto* cases = window.findChild<QTreeWidget*>(QStringLiteral("taskCases"));
        QVERIFY(cases);
        QCOMPARE(cases->topLevelItemCount(), 2);
        QVERIFY(cases->topLevelItem(0)->text(3).contains(QStringLiteral("n=1048576")));
        // The manifest declares no computation: it is derived from the host reference off the
        // GUI thread, then shown with its origin. The broken task shows none.
        auto* computation = window.findChild<QLabel*>(QStringLiteral("taskComputation"));
        QVERIFY(computation);
        QTRY_VERIFY2_WITH_TIMEOUT(computation->text().contains(QStringLiteral("c = a + b")), qPrintable(computation->text()), 30000);
        QVERIFY2(computation->text().startsWith(QStringLiteral("Computation (derived from reference.cpp")),
                 qPrintable(computation->text()));
        list->setCurrentIndex(broken);
        QVERIFY(computation->text().isEmpty());
    }

    void missingFolderSaysSo() {
        kfgui::MainWindow window(kfgui::LaunchOptions{root_ + QStringLiteral("/does-not-exist"), {}, {}});
        auto* list = window.findChild<QListView*>(QStringLiteral("taskList"));
        QCOMPARE(list->model()->rowCount(), 0);
        QVERIFY(window.statusBar()->currentMessage().contains(QStringLiteral("does not exist")));
        QCOMPARE(window.windowTitle(), QStringLiteral("Kernel Foundry"));
    }

    void tasksFolderIsFoundNextToTheExecutable() {
        const auto tree = kftest::temp_dir("gui-layout");
        const QString treeDir = QString::fromStdString(tree.string());
        QDir(treeDir).mkpath(QStringLiteral("build/bin"));
        QDir(treeDir).mkpath(QStringLiteral("tasks"));
        QDir(treeDir).mkpath(QStringLiteral("usr/bin"));
        QDir(treeDir).mkpath(QStringLiteral("usr/share/kernel-foundry/tasks"));
        QCOMPARE(kfgui::resolveTasksFolder({}, treeDir + QStringLiteral("/build/bin")), treeDir + QStringLiteral("/tasks"));
        // Installed: share/ wins over the build-tree guess, which here would be <tree>/tasks.
        QCOMPARE(kfgui::resolveTasksFolder({}, treeDir + QStringLiteral("/usr/bin")),
                 treeDir + QStringLiteral("/usr/share/kernel-foundry/tasks"));
        QCOMPARE(kfgui::resolveTasksFolder(root_, treeDir + QStringLiteral("/usr/bin")), root_);
        QCOMPARE(kfgui::resolveTasksFolder(QStringLiteral("relative/../x"), treeDir),
                 QDir::cleanPath(QDir::currentPath() + QStringLiteral("/x")));
        QVERIFY(kfgui::resolveTasksFolder({}, treeDir).isEmpty());
    }

    void geometryIsSaved() {
        {
            kfgui::MainWindow window(kfgui::LaunchOptions{root_, {}, {}});
            window.resize(1200, 700);
            window.show();
            QVERIFY(QTest::qWaitForWindowExposed(&window));
            window.close();
        }
        QSettings settings;
        QVERIFY(!settings.value(QStringLiteral("mainwindow/geometry")).toByteArray().isEmpty());
        kfgui::MainWindow again(kfgui::LaunchOptions{root_, {}, {}});
        QCOMPARE(again.size(), QSize(1200, 700));
    }

    /** A long search status line beside the run picker, at 1400 px: it wraps onto more lines
     *  instead of being cut off at the label's edge. */
    void searchStatusLineIsShownWhole() {
        kfgui::SearchView view;
        view.resize(1400, 800);
        view.setSummary(QStringLiteral("Run 12 on level2/conv_bias_relu_maxpool: running — 137 of 400 evaluations, "
                                       "best 2.41x (candidate 118, island 3), 4 islands, 2 experts, 17 compiling, "
                                       "device busy 84%, 3 profiles, 0:12:41 elapsed, budget of 400 evaluations"));
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        auto* label = view.findChild<QLabel*>(QStringLiteral("searchSummary"));
        QVERIFY(label);
        const QFontMetrics fm(label->font());
        QVERIFY2(fm.horizontalAdvance(label->text()) > label->width(), "the line fits: the test shows nothing");
        // The height the whole text needs at the label's width, and that the label has it.
        const int needed = label->heightForWidth(label->width());
        QVERIFY2(needed > fm.lineSpacing(), "the label does not wrap its text");
        QVERIFY2(label->height() >= needed, qPrintable(QStringLiteral("%1 px of %2").arg(label->height()).arg(needed)));
        guitest::screenshot(&view, QStringLiteral("search-status-wrapped.png"));
    }

private:
    QString root_;
};

QTEST_MAIN(TestMainWindow)
#include "test_mainwindow.moc"
