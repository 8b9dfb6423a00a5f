#include "taskdetailsview.h"

#include <algorithm>

#include <QFile>
#include <QFontDatabase>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QTabWidget>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "kf/kernelbench_search.h"
#include "kf/paths.h"
#include "kf/generic.h"
#include "kf/recognise.h"
#include "kf/task.h"
#include "project/kernelbenchset.h"
#include "paths.h"

namespace kfgui {

namespace {

QString backendName(kf::Backend b) {
    return b == kf::Backend::Cuda ? TaskDetailsView::tr("CUDA") : TaskDetailsView::tr("host");
}

QString readSource(const kf::Task& task, kf::Backend backend) {
    auto it = task.references.find(backend);
    if (it == task.references.end()) return TaskDetailsView::tr("// This task has no %1 reference.").arg(backendName(backend));
    QFile file(fromPath(it->second));
    if (!file.open(QIODevice::ReadOnly))
        return TaskDetailsView::tr("// Cannot read %1: %2").arg(file.fileName(), file.errorString());
    return QString::fromUtf8(file.readAll());
}

QString joinNames(const std::vector<std::string>& names) {
    QStringList out;
    for (const auto& n : names) out << fromUtf8(n);
    return out.join(QStringLiteral(", "));
}

}  // namespace

TaskDetailsView::TaskDetailsView(QWidget* parent)
    : QWidget(parent),
      title_(new QLabel(this)),
      summary_(new QLabel(this)),
      description_(new QLabel(this)),
      sizes_(new QLabel(this)),
      computation_(new QLabel(this)),
      cases_(new QTreeWidget(this)),
      tabs_(new QTabWidget(this)),
      header_(makeSourceView(QStringLiteral("entryHeader"))),
      cudaReference_(makeSourceView(QStringLiteral("cudaReference"))),
      hostReference_(makeSourceView(QStringLiteral("hostReference"))),
      pytorchSource_(makeSourceView(QStringLiteral("pytorchSource"))) {
    title_->setObjectName(QStringLiteral("taskTitle"));
    QFont titleFont = title_->font();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.4);
    titleFont.setBold(true);
    title_->setFont(titleFont);
    title_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    summary_->setObjectName(QStringLiteral("taskSummary"));
    description_->setObjectName(QStringLiteral("taskDescription"));
    description_->setWordWrap(true);
    description_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    sizes_->setObjectName(QStringLiteral("taskSizes"));
    sizes_->setWordWrap(true);
    computation_->setObjectName(QStringLiteral("taskComputation"));
    computation_->setWordWrap(true);
    computation_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    cases_->setObjectName(QStringLiteral("taskCases"));
    cases_->setHeaderLabels({tr("Case"), tr("Role"), tr("Backends"), tr("Sizes"), tr("Parameters")});
    cases_->setRootIsDecorated(false);
    cases_->setSelectionMode(QAbstractItemView::NoSelection);
    cases_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    cases_->setVerticalScrollBarPolicy(Qt::ScrollBarAsNeeded);

    tabs_->setObjectName(QStringLiteral("sourceTabs"));
    tabs_->addTab(header_, tr("Entry point (CUDA)"));
    tabs_->addTab(cudaReference_, tr("CUDA reference"));
    tabs_->addTab(hostReference_, tr("Host reference"));
    tabs_->addTab(pytorchSource_, tr("PyTorch problem"));

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(title_);
    layout->addWidget(summary_);
    layout->addWidget(description_);
    layout->addWidget(sizes_);
    layout->addWidget(computation_);
    layout->addWidget(cases_);
    layout->addWidget(tabs_, 1);
    clear();
}

QPlainTextEdit* TaskDetailsView::makeSourceView(const QString& objectName) {
    auto* view = new QPlainTextEdit;
    view->setObjectName(objectName);
    view->setReadOnly(true);
    view->setLineWrapMode(QPlainTextEdit::NoWrap);
    view->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    return view;
}

void TaskDetailsView::showTask(const kf::Task& task) {
    title_->setText(task.title.empty() ? fromUtf8(task.name) : fromUtf8(task.title));
    if (task.tags.empty())
        summary_->setText(tr("Task %1 · op class %2").arg(fromUtf8(task.name), fromUtf8(task.op_class)));
    else
        summary_->setText(tr("Task %1 · op class %2 · tags %3")
                              .arg(fromUtf8(task.name), fromUtf8(task.op_class), joinNames(task.tags)));
    description_->setStyleSheet(QString());
    description_->setText(task.description.empty() ? tr("No description.") : fromUtf8(task.description));
    const QString sizeType = task.size_type == kf::DType::I64 ? QStringLiteral("long long") : QStringLiteral("int");
    sizes_->setText(tr("Sizes: %1 (%2)").arg(joinNames(task.size_names), sizeType));
    fillCases(task);
    showComputation(task);

    try {
        header_->setPlainText(fromUtf8(kf::entry_header(task, kf::Backend::Cuda)));
    } catch (const std::exception& e) {
        header_->setPlainText(tr("// The entry point cannot be generated: %1").arg(fromUtf8(e.what())));
    }
    cudaReference_->setPlainText(readSource(task, kf::Backend::Cuda));
    hostReference_->setPlainText(readSource(task, kf::Backend::Host));
    pytorchSource_->clear();
    setSourcesVisible(true);
    showTabsFor(false);
}

void TaskDetailsView::showTabsFor(bool kernelBench) {
    for (int i = 0; i < tabs_->count(); ++i) tabs_->setTabVisible(i, (tabs_->widget(i) == pytorchSource_) == kernelBench);
    if (kernelBench) tabs_->setCurrentWidget(pytorchSource_);
    else if (tabs_->currentWidget() == pytorchSource_) tabs_->setCurrentIndex(0);
}

void TaskDetailsView::showKernelBenchProblem(const KernelBenchProblem& kp, const QString& latestRun) {
    const kf::kb::Problem& p = kp.problem;
    title_->setText(tr("%1 (KernelBench)").arg(fromUtf8(p.key())));
    QString source;
    try {
        source = fromUtf8(kf::read_text_file(p.file));
    } catch (const std::exception& e) {
        source = tr("# Cannot read %1: %2").arg(fromPath(p.file), fromUtf8(e.what()));
    }
    std::vector<std::string> ops;
    const std::string opClass = kf::kb::op_class_of(source.toStdString(), &ops);
    if (ops.empty())
        summary_->setText(tr("KernelBench level %1, problem %2 · op class %3").arg(p.level).arg(p.id).arg(fromUtf8(opClass)));
    else
        summary_->setText(tr("KernelBench level %1, problem %2 · op class %3 · %4")
                              .arg(p.level)
                              .arg(p.id)
                              .arg(fromUtf8(opClass), joinNames(ops)));
    if (!kp.unsupported.isEmpty()) {
        description_->setStyleSheet(QStringLiteral("color: #c62828;"));
        description_->setText(kp.unsupported);
    } else {
        description_->setStyleSheet(QString());
        description_->setText(latestRun.isEmpty() ? tr("Not run in this project yet.") : latestRun);
    }
    const QString shapes = fromUtf8(kf::kb::shapes_from_source(source.toStdString())).trimmed();
    sizes_->setText(shapes.isEmpty() ? tr("Inputs: not found in the source.") : tr("Inputs:\n%1").arg(shapes));
    cases_->clear();
    ++computationGeneration_;
    computation_->clear();
    header_->clear();
    cudaReference_->clear();
    hostReference_->clear();
    pytorchSource_->setPlainText(source);
    setSourcesVisible(true);
    cases_->setVisible(false);
    computation_->setVisible(false);
    showTabsFor(true);
}

void TaskDetailsView::showComputation(const kf::Task& task) {
    const quint64 generation = ++computationGeneration_;
    if (task.computation) {
        computation_->setText(tr("Computation (from the manifest): %1").arg(fromUtf8(task.computation->summary())));
        return;
    }
    computation_->setText(tr("Computation: deriving it from the host reference…"));
    // The recognition and, where it fails, what the generic expert still writes.
    using Derived = std::pair<kf::Recognition, std::string>;
    auto* watcher = new QFutureWatcher<Derived>(this);
    connect(watcher, &QFutureWatcher<Derived>::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != computationGeneration_) return;  // another task is shown now
        const auto [r, generic] = watcher->result();
        if (r.computation)
            computation_->setText(tr("Computation (%1): %2").arg(fromUtf8(r.computation->origin), fromUtf8(r.computation->summary())));
        else
            computation_->setText(tr("No computation, so no op-class template: %1. Declare it in the manifest (docs/task-format.md).")
                                      .arg(fromUtf8(r.reason)) +
                                  QLatin1Char('\n') + tr("The generic expert: %1.").arg(fromUtf8(generic)));
    });
    watcher->setFuture(QtConcurrent::run([task]() -> Derived {
        try {
            kf::Recognition r = kf::recognise_reference(task, kf::Backend::Host);
            if (r.computation) return {r, std::string()};
            return {r, kf::generic_summary(kf::generic_kernels(task, kf::Backend::Cuda))};
        } catch (const std::exception& e) {
            return {kf::Recognition{std::nullopt, e.what()}, std::string()};
        }
    }));
}

void TaskDetailsView::fillCases(const kf::Task& task) {
    cases_->clear();
    for (const kf::TaskCase& c : task.cases) {
        QStringList backends;
        for (kf::Backend b : c.backends) backends << backendName(b);
        QStringList sizes;
        for (const std::string& n : task.size_names) {
            auto it = c.sizes.find(n);
            if (it != c.sizes.end()) sizes << QStringLiteral("%1=%2").arg(fromUtf8(n)).arg(it->second);
        }
        QStringList params;
        for (const auto& [name, value] : c.params) params << QStringLiteral("%1=%2").arg(fromUtf8(name)).arg(value);
        auto* item = new QTreeWidgetItem(
            cases_, {fromUtf8(c.name), c.primary ? tr("primary") : tr("validation"),
                     backends.isEmpty() ? tr("all") : backends.join(QStringLiteral(", ")),
                     sizes.join(QStringLiteral(", ")), params.join(QStringLiteral(", "))});
        if (c.primary) {
            QFont bold = item->font(0);
            bold.setBold(true);
            item->setFont(0, bold);
        }
    }
    // Tall enough for the usual handful of cases, so the sources below get the space.
    const int rows = std::clamp(cases_->topLevelItemCount(), 1, 6);
    const int rowHeight = cases_->topLevelItemCount() > 0 ? cases_->sizeHintForRow(0) : fontMetrics().height();
    cases_->setFixedHeight(cases_->header()->sizeHint().height() + rows * rowHeight + 2 * cases_->frameWidth() + 2);
}

void TaskDetailsView::showLoadError(const QString& relativePath, const QString& error) {
    title_->setText(relativePath);
    summary_->setText(tr("This task could not be loaded."));
    description_->setStyleSheet(QStringLiteral("color: #c62828;"));
    description_->setText(error);
    sizes_->clear();
    ++computationGeneration_;
    computation_->clear();
    cases_->clear();
    header_->clear();
    cudaReference_->clear();
    hostReference_->clear();
    pytorchSource_->clear();
    setSourcesVisible(false);
}

void TaskDetailsView::clear() {
    title_->setText(tr("No task selected"));
    summary_->setText(tr("Choose a task on the left to see what it asks for."));
    description_->setStyleSheet(QString());
    description_->clear();
    sizes_->clear();
    ++computationGeneration_;
    computation_->clear();
    cases_->clear();
    header_->clear();
    cudaReference_->clear();
    hostReference_->clear();
    pytorchSource_->clear();
    setSourcesVisible(false);
}

void TaskDetailsView::setSourcesVisible(bool visible) {
    sizes_->setVisible(visible);
    computation_->setVisible(visible);
    cases_->setVisible(visible);
    tabs_->setVisible(visible);
}

}  // namespace kfgui
