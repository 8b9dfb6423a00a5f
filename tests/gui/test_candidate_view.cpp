// The candidate view, offscreen: source, diagnosis and provenance of stored candidates, a
// compile error marked on its line, a hand edit evaluated for real on the host backend and
// stored as a user candidate, and injection into a search.
#include <QtTest>
#include <QtWidgets>

#include "candidate/candidateview.h"
#include "candidate/diagnosispanel.h"
#include "candidate/provenancepanel.h"
#include "editor/codeeditor.h"
#include "editor/cudalexer.h"
#include "enginewords.h"
#include "guiproject.h"
#include "testsupport.h"

class TestCandidateView : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() {
        QStandardPaths::setTestModeEnabled(true);
        qputenv("KF_CACHE_DIR", QByteArray::fromStdString((kftest::temp_dir("gui-cache") / "compile").string()));
        project_ = guitest::makeProject();
    }

    void lexerKnowsCuda() {
        kfgui::CudaLexer lexer;
        const QString keywords = QString::fromLatin1(lexer.keywords(1));
        const QString names = QString::fromLatin1(lexer.keywords(2));
        for (const char* k : {"__global__", "__shared__", "__restrict__", "__launch_bounds__", "constexpr"})
            QVERIFY2(keywords.split(QLatin1Char(' ')).contains(QLatin1String(k)), k);
        for (const char* k : {"threadIdx", "warpSize", "__syncthreads", "__shfl_xor_sync", "__ldg", "atomicAdd",
                              "__expf", "float4", "half2"})
            QVERIFY2(names.split(QLatin1Char(' ')).contains(QLatin1String(k)), k);
        QCOMPARE(QString::fromLatin1(lexer.language()), QStringLiteral("CUDA"));
    }

    void showsCompileErrorOnItsLine() {
        kfgui::CandidateView view;
        view.resize(1200, 700);
        view.showCandidate(project_.dir, project_.broken);
        QCOMPARE(view.editor()->text(), QString::fromLatin1(guitest::kSourceBroken));
        QCOMPARE(view.editor()->markedLines(kf::Severity::Error), QList<int>{5});
        QCOMPARE(view.editor()->markedLines(kf::Severity::Warning), QList<int>{3});
        QVERIFY(view.editor()->annotation(4).contains(QStringLiteral("expected ';'")));
        QCOMPARE(view.storedDiagnosis()->value(QStringLiteral("Summary"), QStringLiteral("status")),
                 kfgui::statusText(QStringLiteral("compile_error")));
        QCOMPARE(view.storedDiagnosis()->value(QStringLiteral("Compile"), QStringLiteral("diagnostics")), QStringLiteral("2"));
        QVERIFY(!view.storedDiagnosis()->sections().contains(QStringLiteral("Timing")));
        QCOMPARE(view.provenance()->field(QStringLiteral("Expert")), QStringLiteral("llm-memory"));
        QCOMPARE(view.provenance()->field(QStringLiteral("Parents")), QString::number(project_.b));
        QCOMPARE(view.provenance()->field(QStringLiteral("Author")), QStringLiteral("engine"));
        QCOMPARE(view.provenance()->rationale(), QStringLiteral("Unrolled by hand."));
        QVERIFY(view.editedDiagnosis()->isHidden());
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));
        guitest::screenshot(&view, QStringLiteral("candidate-view.png"));
    }

    void showsDiagnosisSections() {
        kfgui::CandidateView view;
        view.showCandidate(project_.dir, project_.b);
        const QStringList sections = view.storedDiagnosis()->sections();
        for (const char* s : {"Summary", "Compile", "Correctness", "Timing", "Roofline", "Integrity", "Profile"})
            QVERIFY2(sections.contains(QLatin1String(s)), s);
        QCOMPARE(view.storedDiagnosis()->value(QStringLiteral("Timing"), QStringLiteral("speedup")), QStringLiteral("2"));
        QCOMPARE(view.storedDiagnosis()->value(QStringLiteral("Roofline"), QStringLiteral("bound")), QStringLiteral("memory"));
        QCOMPARE(view.storedDiagnosis()->value(QStringLiteral("Profile"), QStringLiteral("available")), QStringLiteral("yes"));
        QCOMPARE(view.storedDiagnosis()->value(QStringLiteral("Profile"), QStringLiteral("bound")), QStringLiteral("memory"));
        QVERIFY(view.editor()->markedLines(kf::Severity::Error).isEmpty());
        QCOMPARE(view.provenance()->field(QStringLiteral("Island")), QStringLiteral("1"));
        QTRY_COMPARE(view.editor()->tunableAnnotationCount(), 1);

        // The seed has no profile: no such section, no made-up numbers.
        view.showCandidate(project_.dir, project_.a);
        QVERIFY(!view.storedDiagnosis()->sections().contains(QStringLiteral("Profile")));
        QCOMPARE(view.provenance()->field(QStringLiteral("Parents")), QStringLiteral("none (seed)"));

        view.showCandidate(project_.dir, 9999);
        QVERIFY(view.editor()->text().isEmpty());
    }

    void editedSourceIsEvaluatedAndStored() {
        kfgui::CandidateView view;
        view.resize(1400, 800);
        view.setWorkerPath(QString::fromStdString(kftest::worker_path().string()));
        kf::EvalOptions fast;
        fast.min_time_ms = 5;
        fast.min_reps = 3;
        fast.warmup = 1;
        fast.timeout_s = 120;
        view.setEvalOptions(fast);
        view.showCandidate(project_.dir, project_.broken);
        view.show();
        QVERIFY(QTest::qWaitForWindowExposed(&view));

        // Repair line 5 by hand and evaluate.
        QString fixed = QString::fromLatin1(guitest::kSourceBroken);
        fixed.replace(QStringLiteral("y[i]\n}"), QStringLiteral("y[i];\n}"));
        view.editor()->setText(fixed);
        QSignalSpy finished(&view, &kfgui::CandidateView::evaluationFinished);
        auto* button = view.findChild<QPushButton*>(QStringLiteral("evaluateButton"));
        QVERIFY(button && button->isEnabled());
        QTest::mouseClick(button, Qt::LeftButton);
        QVERIFY(view.isEvaluating());
        QVERIFY(!button->isEnabled());
        // The GUI thread keeps serving events while the worker thread compiles and runs it.
        QVERIFY(finished.wait(280000));
        QVERIFY(!view.isEvaluating());

        const qint64 stored = finished.at(0).at(0).toLongLong();
        QVERIFY(stored > project_.broken);
        QCOMPARE(view.lastStoredId(), stored);
        QVERIFY(!view.editedDiagnosis()->isHidden());
        QCOMPARE(view.editedDiagnosis()->value(QStringLiteral("Summary"), QStringLiteral("status")), kfgui::statusText(QStringLiteral("ok")));
        // The old diagnosis stays beside the new one; the fixed line lost its marker.
        QCOMPARE(view.storedDiagnosis()->value(QStringLiteral("Summary"), QStringLiteral("status")),
                 kfgui::statusText(QStringLiteral("compile_error")));
        QVERIFY(view.editor()->markedLines(kf::Severity::Error).isEmpty());
        QVERIFY(view.editedDiagnosis()->width() > 100);
        guitest::screenshot(&view, QStringLiteral("candidate-view-evaluated.png"));

        kf::ProjectStore store = kf::ProjectStore::open(project_.dir.toStdString());
        const auto c = store.candidate(stored);
        QVERIFY(c);
        QCOMPARE(c->author, std::string("user"));
        // One origin word for the user's kernels, as for those injected into a running search.
        QCOMPARE(c->expert, std::string("user"));
        QCOMPARE(c->parents, std::vector<std::int64_t>{project_.broken});
        QCOMPARE(c->run_id, project_.run);
        QCOMPARE(QString::fromStdString(c->source), fixed);
        const auto e = store.evaluation_of(stored);
        QVERIFY(e);
        QCOMPARE(e->status, std::string("ok"));
        QVERIFY(e->fitness > 0);

        // A new edit that breaks the source again is diagnosed and marked on its line.
        QString broken = fixed;
        broken.replace(QStringLiteral("z[i] = alpha"), QStringLiteral("z[i] = alpha_missing"));
        view.editor()->setText(broken);
        view.evaluate();
        QVERIFY(finished.wait(280000));
        QCOMPARE(view.editedDiagnosis()->value(QStringLiteral("Summary"), QStringLiteral("status")),
                 kfgui::statusText(QStringLiteral("compile_error")));
        QCOMPARE(view.editor()->markedLines(kf::Severity::Error), QList<int>{5});
    }

    /**
     * Cancel, enabled only while an evaluation runs, ends it without storing anything, even
     * when the candidate never returns: the worker is stopped long before the time limit.
     */
    void cancelStopsTheEvaluation() {
        kfgui::CandidateView view;
        view.setWorkerPath(QString::fromStdString(kftest::worker_path().string()));
        kf::EvalOptions fast;
        fast.min_time_ms = 5;
        fast.min_reps = 3;
        fast.warmup = 1;
        fast.timeout_s = 120;
        view.setEvalOptions(fast);
        view.showCandidate(project_.dir, project_.a);
        auto* evaluate = view.findChild<QPushButton*>(QStringLiteral("evaluateButton"));
        QVERIFY(evaluate && evaluate->isEnabled());
        QVERIFY(!view.cancelButton()->isEnabled());
        auto count = [&] { return kf::ProjectStore::open(project_.dir.toStdString()).candidates(project_.run).size(); };
        const std::size_t before = count();

        const QString stored = view.editor()->text();
        view.editor()->setText(QStringLiteral("#include \"kf_task.h\"\n"
                                              "extern \"C\" void kf_solve(const float* x, const float* y, float* z, int n, float alpha) {\n"
                                              "    (void)x; (void)y; (void)z; (void)n; (void)alpha;\n"
                                              "    volatile int spin = 1;\n"
                                              "    while (spin) {}\n"
                                              "}\n"));
        QSignalSpy finished(&view, &kfgui::CandidateView::evaluationFinished);
        view.evaluate();
        QVERIFY(view.isEvaluating());
        QVERIFY(view.cancelButton()->isEnabled());
        QVERIFY(!evaluate->isEnabled());
        // Compiled, and the worker runs the endless candidate: beside the runner it keeps
        // started ahead, the candidate's own runner exists.
        QTRY_VERIFY_WITH_TIMEOUT(kftest::descendants_with_arg("--runner", "kfoundry-work") >= 2, 60000);
        QVERIFY(finished.isEmpty());
        QElapsedTimer clock;
        clock.start();
        QTest::mouseClick(view.cancelButton(), Qt::LeftButton);
        QVERIFY(!view.cancelButton()->isEnabled());
        QVERIFY(finished.wait(60000));
        QVERIFY2(clock.elapsed() < 30000, qPrintable(QString::number(clock.elapsed())));  // the time limit is 120 s
        QCOMPARE(finished.at(0).at(0).toLongLong(), qint64(0));
        QVERIFY(!view.isEvaluating());
        QCOMPARE(view.stateText(), QStringLiteral("Cancelled"));
        QVERIFY(evaluate->isEnabled());
        QVERIFY(!view.cancelButton()->isEnabled());
        QCOMPARE(view.lastStoredId(), qint64(0));
        QCOMPARE(count(), before);  // nothing stored

        // The worker is free again: the next evaluation runs and is stored.
        view.editor()->setText(stored + QStringLiteral("// edited\n"));
        view.evaluate();
        QVERIFY(finished.wait(280000));
        QVERIFY(finished.at(1).at(0).toLongLong() > 0);
        QCOMPARE(count(), before + 1);
    }

    void injectAsksForAnIsland() {
        kfgui::CandidateView view;
        view.showCandidate(project_.dir, project_.b);
        view.editor()->setText(view.editor()->text() + QStringLiteral("// edited\n"));
        QSignalSpy inject(&view, &kfgui::CandidateView::injectRequested);
        bool answered = false;
        QTimer::singleShot(0, this, [&] {
            auto* dialog = qobject_cast<QInputDialog*>(QApplication::activeModalWidget());
            if (!dialog) return;
            QCOMPARE(dialog->intMaximum(), 1);  // the run has two islands
            dialog->setIntValue(1);
            dialog->accept();
            answered = true;
        });
        view.requestInject();
        QVERIFY(answered);
        QCOMPARE(inject.count(), 1);
        QCOMPARE(inject.at(0).at(0).toString(), view.editor()->text());
        QVERIFY(inject.at(0).at(0).toString().endsWith(QStringLiteral("// edited\n")));
        QCOMPARE(inject.at(0).at(1).toInt(), 1);
        QCOMPARE(inject.at(0).at(2).toLongLong(), project_.b);
    }

private:
    guitest::Project project_;
};

QTEST_MAIN(TestCandidateView)
#include "test_candidate_view.moc"
