// The library view, offscreen: patterns and insights listed, full-text search and filters,
// details of each kind, approve and delete written to the database, export and import.
#include <QtTest>
#include <QtWidgets>

#include "editor/codeeditor.h"
#include "guiproject.h"
#include "kf/library.h"
#include "library/librarydetail.h"
#include "library/libraryfilterproxy.h"
#include "library/librarytablemodel.h"
#include "library/libraryview.h"
#include "testsupport.h"

namespace {

kf::Pattern pattern(const std::string& name, const std::string& op, std::vector<std::string> bounds,
                    const std::string& description, const std::string& source) {
    kf::Pattern p;
    p.name = name;
    p.op_class = op;
    p.family = op + "/" + name;
    p.bound_tags = std::move(bounds);
    p.description = description;
    p.source = source;
    p.provenance = "seed";
    return p;
}

kf::Insight insight(const std::string& op, const std::string& bound, const std::string& action, std::vector<double> gains) {
    kf::Insight in;
    in.condition.op_class = op;
    in.condition.bound = bound;
    in.action = action;
    in.expert = "tuner";
    in.evidence.applications = std::int64_t(gains.size()) + 1;
    in.evidence.successes = std::int64_t(gains.size());
    in.evidence.gains = std::move(gains);
    in.provenance.run_ids = {"1"};
    return in;
}

const char* kSoftmaxSource =
    "#define BLOCK 256  // @kf tunable values(128, 256, 512)\n"
    "#define VEC 4      // @kf tunable values(1, 2, 4)\n"
    "// @kf constraint BLOCK * VEC <= 2048\n"
    "__global__ void softmax(const float* __restrict__ x, float* y, int cols) {\n"
    "    float m = __shfl_xor_sync(0xffffffff, x[threadIdx.x], 16);\n"
    "    y[threadIdx.x] = __expf(m);\n"
    "}\n";

}  // namespace

class TestLibraryView : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        path_ = QString::fromStdString((kftest::temp_dir("gui-library") / "library.db").string());
        kf::ExperienceLibrary lib = kf::ExperienceLibrary::open(path_.toStdString());
        lib.add_pattern(pattern("warp-softmax", "softmax", {"memory"}, "one warp per row, shuffle reductions", kSoftmaxSource));
        lib.add_pattern(pattern("tiled-gemm", "gemm", {"compute"}, "shared-memory tiles, register blocking",
                                "__global__ void gemm() {}\n"));
        lib.add_pattern(pattern("welford-layernorm", "layernorm", {"memory", "latency"}, "single pass Welford",
                                "__global__ void ln() {}\n"));
        proposed_ = lib.add_insight(insight("softmax", "memory", "use warp shuffle reductions instead of shared memory",
                                            {1.4, 1.8, 1.2}));
        other_ = lib.add_insight(insight("gemm", "compute", "raise the tile size when registers allow", {1.1}));
    }

    void listsSearchesAndFilters() {
        kfgui::LibraryView view;
        view.resize(1300, 750);
        view.setLibraryPath(path_);
        QCOMPARE(view.libraryPath(), path_);
        QAbstractItemModel* shown = view.proxy();
        QCOMPARE(view.model()->rowCount(), 5);
        QCOMPARE(shown->rowCount(), 5);

        // Full text: "shuffle" is in one pattern's description and one insight's action.
        view.setSearchText(QStringLiteral("shuffle"));
        QCOMPARE(shown->rowCount(), 2);
        QStringList kinds;
        for (int r = 0; r < shown->rowCount(); ++r) kinds << shown->index(r, 0).data(kfgui::LibraryTableModel::KindRole).toString();
        kinds.sort();
        QCOMPARE(kinds, (QStringList{QStringLiteral("insight"), QStringLiteral("pattern")}));
        view.setSearchText(QStringLiteral("no-such-word"));
        QCOMPARE(shown->rowCount(), 0);
        view.setSearchText(QString());
        QCOMPARE(shown->rowCount(), 5);

        // Filters: bound, op class, status and kind, through the combo boxes.
        auto* bound = view.findChild<QComboBox*>(QStringLiteral("boundFilter"));
        auto* op = view.findChild<QComboBox*>(QStringLiteral("opClassFilter"));
        auto* status = view.findChild<QComboBox*>(QStringLiteral("statusFilter"));
        auto* kind = view.findChild<QComboBox*>(QStringLiteral("kindFilter"));
        QVERIFY(bound && op && status && kind);
        bound->setCurrentIndex(bound->findData(QStringLiteral("memory")));
        QCOMPARE(shown->rowCount(), 3);  // two patterns and the softmax insight
        op->setCurrentIndex(op->findData(QStringLiteral("softmax")));
        QCOMPARE(shown->rowCount(), 2);
        kind->setCurrentIndex(kind->findData(QStringLiteral("pattern")));
        QCOMPARE(shown->rowCount(), 1);
        QCOMPARE(shown->index(0, kfgui::LibraryTableModel::NameColumn).data().toString(), QStringLiteral("warp-softmax"));
        kind->setCurrentIndex(0);
        op->setCurrentIndex(0);
        bound->setCurrentIndex(0);
        status->setCurrentIndex(status->findData(QStringLiteral("proposed")));
        QCOMPARE(shown->rowCount(), 2);
        status->setCurrentIndex(0);
        QCOMPARE(shown->rowCount(), 5);
    }

    void detailsAndApprove() {
        kfgui::LibraryView view;
        view.resize(1300, 750);
        view.setLibraryPath(path_);
        QAbstractItemModel* shown = view.proxy();
        auto rowOf = [&](const QString& text) {
            for (int r = 0; r < shown->rowCount(); ++r)
                if (shown->index(r, kfgui::LibraryTableModel::NameColumn).data().toString().contains(text)) return r;
            return -1;
        };
        auto* approve = view.findChild<QPushButton*>(QStringLiteral("approveButton"));
        QVERIFY(approve);

        view.selectRow(rowOf(QStringLiteral("warp-softmax")));
        QCOMPARE(view.detail()->sourceView()->text(), QString::fromLatin1(kSoftmaxSource));
        QVERIFY(view.detail()->sourceView()->isReadOnly());
        QCOMPARE(view.detail()->tunables()->topLevelItemCount(), 3);  // BLOCK, VEC and the constraint
        QCOMPARE(view.detail()->tunables()->topLevelItem(0)->text(0), QStringLiteral("BLOCK"));
        QVERIFY(!approve->isEnabled());  // patterns are not approved

        view.selectRow(rowOf(QStringLiteral("warp shuffle")));
        QCOMPARE(view.detail()->gainBars(), 3);
        QVERIFY(approve->isEnabled());
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        guitest::screenshot(&view, QStringLiteral("library-view.png"));
        QTest::mouseClick(approve, Qt::LeftButton);
        {
            kf::ExperienceLibrary lib = kf::ExperienceLibrary::open(path_.toStdString());
            QCOMPARE(lib.insight(proposed_)->status, std::string("approved"));
            QCOMPARE(lib.insight(other_)->status, std::string("proposed"));
        }
        // The list shows the new status and keeps the selection.
        const int row = rowOf(QStringLiteral("warp shuffle"));
        QCOMPARE(shown->index(row, kfgui::LibraryTableModel::StatusColumn).data(kfgui::LibraryTableModel::StatusRole).toString(),
                 QStringLiteral("approved"));
        QCOMPARE(view.table()->currentIndex().row(), row);
        view.rejectSelected();
        kf::ExperienceLibrary lib = kf::ExperienceLibrary::open(path_.toStdString());
        QCOMPARE(lib.insight(proposed_)->status, std::string("rejected"));
    }

    void exportImportAndDelete() {
        kfgui::LibraryView view;
        view.setLibraryPath(path_);
        const QString json = QString::fromStdString((kftest::temp_dir("gui-export") / "library.json").string());
        QVERIFY(view.exportTo(json));
        QVERIFY(QFileInfo(json).size() > 100);

        kfgui::LibraryView other;
        other.setLibraryPath(QString::fromStdString((kftest::temp_dir("gui-import") / "library.db").string()));
        QCOMPARE(other.model()->rowCount(), 0);
        QVERIFY(other.importFrom(json));
        QCOMPARE(other.model()->rowCount(), 5);

        // Delete asks first; "No" keeps the entry, "Yes" removes it from the database.
        const int gemm = [&] {
            for (int r = 0; r < other.proxy()->rowCount(); ++r)
                if (other.proxy()->index(r, kfgui::LibraryTableModel::NameColumn).data().toString() == QStringLiteral("tiled-gemm"))
                    return r;
            return -1;
        }();
        QVERIFY(gemm >= 0);
        auto answer = [](QMessageBox::StandardButton button) {
            QTimer::singleShot(0, [button] {
                if (auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget())) box->button(button)->click();
            });
        };
        other.selectRow(gemm);
        answer(QMessageBox::No);
        other.deleteSelected();
        QCOMPARE(other.model()->rowCount(), 5);
        answer(QMessageBox::Yes);
        other.deleteSelected();
        QCOMPARE(other.model()->rowCount(), 4);
        kf::ExperienceLibrary lib = kf::ExperienceLibrary::open(other.libraryPath().toStdString());
        QVERIFY(!lib.pattern_by_name("tiled-gemm"));
        QVERIFY(lib.pattern_by_name("warp-softmax"));
    }

    void foreignFileIsRefusedWithoutBlocking() {
        // A file that is not a library: the view says so and stays usable (no modal loop).
        const auto bad = kftest::temp_dir("gui-bad-library") / "notes.db";
        kftest::write_file(bad, "just some text, not SQLite\n");
        kfgui::LibraryView view;
        view.setLibraryPath(QString::fromStdString(bad.string()));
        QCOMPARE(view.model()->rowCount(), 0);
        QVERIFY(view.libraryPath().isEmpty());
        auto* count = view.findChild<QLabel*>(QStringLiteral("libraryCount"));
        QVERIFY(count && count->text().contains(QStringLiteral("not a Kernel Foundry library")));
        QCOMPARE(kftest::read_file(bad), std::string("just some text, not SQLite\n"));
    }

private:
    QString path_;
    std::int64_t proposed_ = 0, other_ = 0;
};

QTEST_MAIN(TestLibraryView)
#include "test_library_view.moc"
