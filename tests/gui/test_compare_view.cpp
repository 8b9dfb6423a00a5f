// The compare view, offscreen: the line diff of two candidates, their metrics side by side
// (missing ones as "—"), and a run's correct candidates on a clickable roofline.
#include <QtTest>
#include <QtWidgets>

#include <QChart>
#include <QScatterSeries>

#include "compare/compareview.h"
#include "compare/metricscomparison.h"
#include "compare/rooflinechart.h"
#include "compare/sourcediff.h"
#include "guiproject.h"
#include "testsupport.h"

class TestCompareView : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        project_ = guitest::makeProject();
    }

    void diffOfKnownChange() {
        const QList<kfgui::DiffLine> lines =
            kfgui::diffLines(QString::fromLatin1(guitest::kSourceA), QString::fromLatin1(guitest::kSourceB));
        QStringList added, removed;
        for (const auto& l : lines) {
            if (l.kind == kfgui::DiffLine::Added) added << l.text;
            if (l.kind == kfgui::DiffLine::Removed) removed << l.text;
        }
        QCOMPARE(removed, QStringList{QStringLiteral("    for (int i = 0; i < n; ++i) z[i] = alpha * x[i] + y[i];")});
        QCOMPARE(added.size(), 3);
        QVERIFY(added.contains(QStringLiteral("    constexpr int BLOCK = 4096;  // @kf tunable values(1024, 4096)")));
        QVERIFY(added.contains(QStringLiteral("    for (int b = 0; b < n; b += BLOCK)")));
        // The line numbers follow each side: the unchanged last line is 6 before and 8 after.
        QCOMPARE(lines.last().kind, kfgui::DiffLine::Same);
        QCOMPARE(lines.last().oldLine, 6);
        QCOMPARE(lines.last().newLine, 8);
    }

    void compareShowsDiffAndMetrics() {
        kfgui::CompareView view;
        view.resize(1200, 700);
        view.compare(project_.dir, project_.a, project_.b);
        QCOMPARE(view.currentPage(), 0);
        kfgui::DiffModel* diff = view.diffModel();
        QCOMPARE(diff->added(), 3);
        QCOMPARE(diff->removed(), 1);

        // Side by side: the removed loop faces the added outer loop, in colour.
        QCOMPARE(diff->mode(), kfgui::DiffModel::Mode::SideBySide);
        QCOMPARE(diff->columnCount(), 4);
        int paired = -1;
        for (int r = 0; r < diff->rowCount(); ++r)
            if (diff->index(r, 1).data().toString().contains(QStringLiteral("++i) z[i]"))) paired = r;
        QVERIFY(paired >= 0);
        QCOMPARE(diff->index(paired, 3).data().toString(), QStringLiteral("    for (int b = 0; b < n; b += BLOCK)"));
        QCOMPARE(diff->index(paired, 0).data().toInt(), 5);
        QCOMPARE(diff->index(paired, 2).data().toInt(), 6);
        const QColor removedColour = diff->index(paired, 1).data(Qt::BackgroundRole).value<QBrush>().color();
        const QColor addedColour = diff->index(paired, 3).data(Qt::BackgroundRole).value<QBrush>().color();
        QVERIFY(removedColour.red() > removedColour.green());
        QVERIFY(addedColour.green() > addedColour.red());
        QCOMPARE(diff->rowCount(), 8);  // 5 common lines, 1 added alone, 1 pair, 1 added alone

        auto* mode = view.findChild<QComboBox*>(QStringLiteral("diffMode"));
        QVERIFY(mode);
        mode->setCurrentIndex(mode->findData(int(kfgui::DiffModel::Mode::Unified)));
        QCOMPARE(diff->mode(), kfgui::DiffModel::Mode::Unified);
        QCOMPARE(diff->rowCount(), 9);  // 5 common + 1 removed + 3 added
        int plus = 0, minus = 0;
        for (int r = 0; r < diff->rowCount(); ++r) {
            const QString t = diff->index(r, 2).data().toString();
            plus += t.startsWith(QLatin1Char('+'));
            minus += t.startsWith(QLatin1Char('-'));
        }
        QCOMPARE(plus, 3);
        QCOMPARE(minus, 1);

        const QStringList categories = view.metrics()->categories();
        for (const char* c : {"Time (ms)", "GB/s", "GFLOP/s", "Speedup", "Registers", "Occupancy (%)",
                              "Stall: long_scoreboard", "Stall: barrier"})
            QVERIFY2(categories.contains(QLatin1String(c)), c);
        QAbstractItemModel* table = view.metrics()->model();
        auto row = [&](const QString& name) {
            for (int r = 0; r < table->rowCount(); ++r)
                if (table->index(r, 0).data().toString() == name) return r;
            return -1;
        };
        QCOMPARE(table->index(row(QStringLiteral("Time (ms)")), 1).data().toString(), QStringLiteral("2"));
        QCOMPARE(table->index(row(QStringLiteral("Time (ms)")), 2).data().toString(), QStringLiteral("1"));
        QCOMPARE(table->index(row(QStringLiteral("Time (ms)")), 3).data().toString(), QStringLiteral("0.5"));
        // Not measured is "—", never zero: no ptxas on the host, no profile for the seed.
        QCOMPARE(table->index(row(QStringLiteral("Registers")), 1).data().toString(), QStringLiteral("—"));
        QCOMPARE(table->index(row(QStringLiteral("Registers")), 2).data().toString(), QStringLiteral("32"));
        QCOMPARE(table->index(row(QStringLiteral("Occupancy (%)")), 1).data().toString(), QStringLiteral("—"));
        QCOMPARE(table->index(row(QStringLiteral("Occupancy (%)")), 2).data().toString(), QStringLiteral("50"));
        QCOMPARE(table->index(row(QStringLiteral("Stall: long_scoreboard")), 1).data().toString(), QStringLiteral("—"));
        QCOMPARE(table->index(row(QStringLiteral("Stall: long_scoreboard")), 2).data().toString(), QStringLiteral("0.42"));
        QCOMPARE(view.metrics()->chart()->series().size(), 1);

        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        mode->setCurrentIndex(mode->findData(int(kfgui::DiffModel::Mode::SideBySide)));
        guitest::screenshot(&view, QStringLiteral("compare-view.png"));
        auto* tabs = view.findChild<QTabWidget*>(QStringLiteral("compareTabs"));
        QVERIFY(tabs);
        tabs->setCurrentIndex(1);
        guitest::screenshot(&view, QStringLiteral("compare-metrics.png"));

        // A failed candidate has no time: "—", not a number left over from somewhere.
        view.compare(project_.dir, project_.b, project_.broken);
        QCOMPARE(table->index(row(QStringLiteral("Time (ms)")), 2).data().toString(), QStringLiteral("—"));
    }

    void rooflineHasOnePointPerCorrectCandidate() {
        kfgui::CompareView view;
        view.resize(1000, 700);
        QSignalSpy activated(&view, &kfgui::CompareView::candidateActivated);
        view.showRun(project_.dir, project_.run);
        QCOMPARE(view.currentPage(), 2);
        kfgui::RooflineChart* roofline = view.roofline();
        QScatterSeries* series = roofline->series();
        QVERIFY(series);
        QCOMPARE(series->count(), 2);  // the compile error is not on it
        QCOMPARE(roofline->points().size(), 2);
        QCOMPARE(roofline->points()[0].candidateId, project_.a);
        QCOMPARE(roofline->points()[1].candidateId, project_.b);
        QCOMPARE(series->at(1).y(), 2.1);
        QCOMPARE(roofline->peakGbps(), 40.0);
        QCOMPARE(roofline->peakGflops(), 400.0);
        QCOMPARE(roofline->chart()->series().size(), 3);  // two roofs and the candidates
        QCOMPARE(roofline->chart()->axes(Qt::Horizontal).first()->type(), QAbstractAxis::AxisTypeLogValue);

        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        guitest::screenshot(&view, QStringLiteral("compare-roofline.png"));
        // A click reports the point nearest to it.
        Q_EMIT series->clicked(series->at(1));
        QCOMPARE(activated.count(), 1);
        QCOMPARE(activated.at(0).at(0).toLongLong(), project_.b);
        Q_EMIT series->clicked(QPointF(series->at(0).x() * 1.01, series->at(0).y() * 0.99));
        QCOMPARE(activated.count(), 2);
        QCOMPARE(activated.at(1).at(0).toLongLong(), project_.a);
    }

private:
    guitest::Project project_;
};

QTEST_MAIN(TestCompareView)
#include "test_compare_view.moc"
