#include "library/libraryview.h"

#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSaveFile>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>

#include <exception>
#include <set>

#include "library/librarydetail.h"
#include "library/libraryeditdialog.h"
#include "library/libraryfilterproxy.h"
#include "library/librarytablemodel.h"

namespace kfgui {

namespace {

QComboBox* filterBox(QWidget* parent, const QString& name, const QString& any) {
    auto* box = new QComboBox(parent);
    box->setObjectName(name);
    box->addItem(any, QString());
    return box;
}

// Keeps the current choice when the list of values changes.
void refill(QComboBox* box, const QString& any, const std::set<std::string>& values) {
    const QString current = box->currentData().toString();
    const QSignalBlocker block(box);
    box->clear();
    box->addItem(any, QString());
    for (const auto& v : values)
        if (!v.empty()) box->addItem(QString::fromStdString(v), QString::fromStdString(v));
    const int at = box->findData(current);
    box->setCurrentIndex(at < 0 ? 0 : at);
}

}  // namespace

LibraryView::LibraryView(QWidget* parent)
    : QWidget(parent),
      model_(new LibraryTableModel(this)),
      proxy_(new LibraryFilterProxy(this)),
      search_(new QLineEdit(this)),
      searchTimer_(new QTimer(this)),
      kind_(filterBox(this, QStringLiteral("kindFilter"), tr("Patterns and insights"))),
      opClass_(filterBox(this, QStringLiteral("opClassFilter"), tr("Any op class"))),
      bound_(filterBox(this, QStringLiteral("boundFilter"), tr("Any bound"))),
      status_(filterBox(this, QStringLiteral("statusFilter"), tr("Any status"))),
      table_(new QTableView(this)),
      detail_(new LibraryDetail(this)),
      count_(new QLabel(this)),
      approve_(new QPushButton(tr("Approve"), this)),
      reject_(new QPushButton(tr("Reject"), this)),
      edit_(new QPushButton(tr("Edit…"), this)),
      tag_(new QPushButton(tr("Tag…"), this)),
      delete_(new QPushButton(tr("Delete…"), this)),
      import_(new QPushButton(tr("Import…"), this)),
      export_(new QPushButton(tr("Export…"), this)) {
    search_->setObjectName(QStringLiteral("librarySearch"));
    search_->setPlaceholderText(tr("Search patterns and insights (full text)"));
    search_->setClearButtonEnabled(true);
    kind_->addItem(tr("Patterns"), QStringLiteral("pattern"));
    kind_->addItem(tr("Insights"), QStringLiteral("insight"));
    status_->addItem(tr("Active patterns"), QStringLiteral("active"));
    status_->addItem(tr("Broken patterns"), QStringLiteral("broken"));
    status_->addItem(tr("Proposed insights"), QStringLiteral("proposed"));
    status_->addItem(tr("Approved insights"), QStringLiteral("approved"));
    status_->addItem(tr("Rejected insights"), QStringLiteral("rejected"));
    proxy_->setSourceModel(model_);
    proxy_->setSortCaseSensitivity(Qt::CaseInsensitive);
    table_->setObjectName(QStringLiteral("libraryTable"));
    table_->setModel(proxy_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(LibraryTableModel::KindColumn, Qt::DescendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->verticalHeader()->hide();
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setWordWrap(false);
    detail_->setObjectName(QStringLiteral("libraryDetail"));
    count_->setObjectName(QStringLiteral("libraryCount"));
    approve_->setObjectName(QStringLiteral("approveButton"));
    reject_->setObjectName(QStringLiteral("rejectButton"));
    delete_->setObjectName(QStringLiteral("deleteButton"));
    approve_->setToolTip(tr("Approve the selected insight: the search will use it"));
    reject_->setToolTip(tr("Reject the selected insight: the search will ignore it"));
    tag_->setToolTip(tr("Set the bound tags of the selected pattern"));

    auto* filters = new QHBoxLayout;
    filters->addWidget(search_, 2);
    filters->addWidget(kind_);
    filters->addWidget(opClass_);
    filters->addWidget(bound_);
    filters->addWidget(status_);
    auto* buttons = new QHBoxLayout;
    buttons->addWidget(count_, 1);
    for (QPushButton* b : {approve_, reject_, edit_, tag_, delete_, import_, export_}) buttons->addWidget(b);
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->setObjectName(QStringLiteral("librarySplitter"));
    split->addWidget(table_);
    split->addWidget(detail_);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(filters);
    layout->addWidget(split, 1);
    layout->addLayout(buttons);

    // Querying on every keystroke is wasteful: wait for a short pause in typing.
    searchTimer_->setSingleShot(true);
    searchTimer_->setInterval(250);
    connect(search_, &QLineEdit::textChanged, searchTimer_, qOverload<>(&QTimer::start));
    connect(searchTimer_, &QTimer::timeout, this, &LibraryView::reload);
    connect(kind_, &QComboBox::currentIndexChanged, this, [this] { proxy_->setKind(kind_->currentData().toString()); });
    connect(opClass_, &QComboBox::currentIndexChanged, this,
            [this] { proxy_->setOpClass(opClass_->currentData().toString()); });
    connect(bound_, &QComboBox::currentIndexChanged, this, [this] { proxy_->setBound(bound_->currentData().toString()); });
    connect(status_, &QComboBox::currentIndexChanged, this,
            [this] { proxy_->setStatus(status_->currentData().toString()); });
    connect(proxy_, &QAbstractItemModel::rowsInserted, this, &LibraryView::updateButtons);
    connect(proxy_, &QAbstractItemModel::rowsRemoved, this, &LibraryView::updateButtons);
    connect(proxy_, &QAbstractItemModel::modelReset, this, &LibraryView::updateButtons);
    connect(proxy_, &QAbstractItemModel::layoutChanged, this, &LibraryView::updateButtons);
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, &LibraryView::showSelected);
    connect(approve_, &QPushButton::clicked, this, &LibraryView::approveSelected);
    connect(reject_, &QPushButton::clicked, this, &LibraryView::rejectSelected);
    connect(edit_, &QPushButton::clicked, this, &LibraryView::editSelected);
    connect(tag_, &QPushButton::clicked, this, &LibraryView::tagSelected);
    connect(delete_, &QPushButton::clicked, this, &LibraryView::deleteSelected);
    connect(import_, &QPushButton::clicked, this, &LibraryView::importFile);
    connect(export_, &QPushButton::clicked, this, &LibraryView::exportFile);
    updateButtons();
}

LibraryView::~LibraryView() = default;

void LibraryView::setLibraryPath(const QString& path) {
    library_.reset();
    try {
        library_.emplace(kf::ExperienceLibrary::open(path.toStdString()));
    } catch (const std::exception& e) {
        // Not blocking: this runs while the main window starts, and the list says it too.
        const QString text = tr("Cannot open the library %1:\n%2").arg(path, QString::fromUtf8(e.what()));
        auto* box = new QMessageBox(QMessageBox::Warning, tr("Experience library"), text, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
        reload();
        count_->setText(text);
        return;
    }
    reload();
}

QString LibraryView::libraryPath() const {
    return library_ ? QString::fromStdString(library_->path().string()) : QString();
}

void LibraryView::setSearchText(const QString& text) {
    search_->setText(text);
    searchTimer_->stop();
    reload();
}

void LibraryView::selectRow(int proxyRow) {
    table_->selectionModel()->setCurrentIndex(proxy_->index(proxyRow, 0),
                                              QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

std::optional<LibraryView::Selection> LibraryView::selection() const {
    const QModelIndex current = table_->selectionModel()->currentIndex();
    if (!current.isValid()) return std::nullopt;
    const QModelIndex source = proxy_->mapToSource(current);
    return Selection{source.data(LibraryTableModel::KindRole).toString() == QLatin1String("pattern"),
                     source.data(LibraryTableModel::IdRole).toLongLong()};
}

bool LibraryView::withLibrary(const QString& what, const std::function<void(kf::ExperienceLibrary&)>& op) {
    if (!library_) {
        QMessageBox::warning(this, what, tr("No library is open."));
        return false;
    }
    try {
        op(*library_);
        return true;
    } catch (const std::exception& e) {
        QMessageBox::warning(this, what, QString::fromUtf8(e.what()));
    } catch (...) {
        QMessageBox::warning(this, what, tr("The library reported an unknown error."));
    }
    return false;
}

void LibraryView::reload() {
    const std::optional<Selection> keep = selection();
    std::vector<LibraryEntry> entries;
    if (library_) {
        withLibrary(tr("Search"), [&](kf::ExperienceLibrary& lib) {
            kf::PatternQuery pq;
            pq.status.clear();
            pq.text = search_->text().trimmed().toStdString();
            pq.limit = 100000;
            for (kf::Pattern& p : lib.patterns(pq)) entries.emplace_back(std::move(p));
            kf::InsightQuery iq;
            iq.text = pq.text;
            iq.limit = 100000;
            for (kf::Insight& in : lib.insights(iq)) entries.emplace_back(std::move(in));
        });
    }
    model_->setEntries(std::move(entries));
    refillFilters();
    if (keep) {
        const int row = model_->rowOf(keep->pattern, keep->id);
        if (row >= 0)
            table_->selectionModel()->setCurrentIndex(proxy_->mapFromSource(model_->index(row, 0)),
                                                      QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    }
    table_->resizeColumnToContents(LibraryTableModel::KindColumn);
    showSelected();
}

void LibraryView::refillFilters() {
    std::set<std::string> ops, bounds;
    for (const LibraryEntry& e : model_->entries()) {
        if (const auto* p = std::get_if<kf::Pattern>(&e)) {
            ops.insert(p->op_class);
            bounds.insert(p->bound_tags.begin(), p->bound_tags.end());
        } else {
            const auto& in = std::get<kf::Insight>(e);
            ops.insert(in.condition.op_class);
            bounds.insert(in.condition.bound.empty() ? in.condition.status : in.condition.bound);
        }
    }
    refill(opClass_, tr("Any op class"), ops);
    refill(bound_, tr("Any bound"), bounds);
    proxy_->setOpClass(opClass_->currentData().toString());
    proxy_->setBound(bound_->currentData().toString());
}

void LibraryView::showSelected() {
    const QModelIndex current = table_->selectionModel()->currentIndex();
    detail_->showEntry(current.isValid() ? model_->entry(proxy_->mapToSource(current).row()) : nullptr);
    updateButtons();
}

void LibraryView::updateButtons() {
    const std::optional<Selection> s = selection();
    approve_->setEnabled(s && !s->pattern);
    reject_->setEnabled(s && !s->pattern);
    tag_->setEnabled(s && s->pattern);
    edit_->setEnabled(s.has_value());
    delete_->setEnabled(s.has_value());
    import_->setEnabled(library_.has_value());
    export_->setEnabled(library_.has_value());
    count_->setText(tr("%n entries shown", nullptr, proxy_->rowCount()) +
                    (model_->rowCount() != proxy_->rowCount() ? tr(" of %1").arg(model_->rowCount()) : QString()));
}

void LibraryView::setInsightStatus(const std::string& status) {
    const std::optional<Selection> s = selection();
    if (!s || s->pattern) return;
    if (withLibrary(tr("Insight status"), [&](kf::ExperienceLibrary& lib) { lib.set_insight_status(s->id, status); })) {
        reload();
        Q_EMIT libraryChanged();
    }
}

void LibraryView::approveSelected() { setInsightStatus("approved"); }
void LibraryView::rejectSelected() { setInsightStatus("rejected"); }

void LibraryView::editSelected() {
    const std::optional<Selection> s = selection();
    if (!s) return;
    bool changed = false;
    withLibrary(tr("Edit"), [&](kf::ExperienceLibrary& lib) {
        if (s->pattern) {
            std::optional<kf::Pattern> p = lib.pattern(s->id);
            if (!p || !LibraryEditDialog::editPattern(this, *p)) return;
            lib.add_pattern(*p);
            changed = true;
            return;
        }
        const std::optional<kf::Insight> before = lib.insight(s->id);
        kf::Insight in = before.value_or(kf::Insight{});
        if (!before || !LibraryEditDialog::editInsight(this, in)) return;
        if (in.condition == before->condition) {
            lib.update_insight_action(in.id, in.action);
        } else {
            // The library keys an insight's condition at creation: store the edited one as a
            // new insight with the same evidence and status, then drop the old one.
            in.id = 0;
            lib.add_insight(in);
            lib.delete_insight(before->id);
        }
        changed = true;
    });
    if (changed) {
        reload();
        Q_EMIT libraryChanged();
    }
}

void LibraryView::tagSelected() {
    const std::optional<Selection> s = selection();
    if (!s || !s->pattern) return;
    bool changed = false;
    withLibrary(tr("Tag"), [&](kf::ExperienceLibrary& lib) {
        std::optional<kf::Pattern> p = lib.pattern(s->id);
        if (!p) return;
        bool ok = false;
        const QString text = QInputDialog::getText(this, tr("Tag pattern"), tr("Bound tags, separated by commas:"),
                                                   QLineEdit::Normal, LibraryEditDialog::joinTags(p->bound_tags), &ok);
        if (!ok) return;
        p->bound_tags = LibraryEditDialog::splitTags(text);
        lib.add_pattern(*p);
        changed = true;
    });
    if (changed) {
        reload();
        Q_EMIT libraryChanged();
    }
}

void LibraryView::deleteSelected() {
    const std::optional<Selection> s = selection();
    if (!s) return;
    const QString what = s->pattern ? tr("pattern %1").arg(s->id) : tr("insight %1").arg(s->id);
    if (QMessageBox::question(this, tr("Delete"), tr("Delete %1 from the library? This cannot be undone.").arg(what),
                              QMessageBox::Yes | QMessageBox::No, QMessageBox::No) != QMessageBox::Yes)
        return;
    if (withLibrary(tr("Delete"), [&](kf::ExperienceLibrary& lib) {
            if (s->pattern) lib.delete_pattern(s->id);
            else lib.delete_insight(s->id);
        })) {
        reload();
        Q_EMIT libraryChanged();
    }
}

void LibraryView::importFile() {
    const QString path = QFileDialog::getOpenFileName(this, tr("Import library entries"), QString(),
                                                      tr("Library JSON (*.json);;All files (*)"));
    if (!path.isEmpty()) importFrom(path);
}

void LibraryView::exportFile() {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export the library"), QStringLiteral("library.json"),
                                                      tr("Library JSON (*.json)"));
    if (!path.isEmpty()) exportTo(path);
}

bool LibraryView::importFrom(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        QMessageBox::warning(this, tr("Import"), tr("Cannot read %1: %2").arg(path, file.errorString()));
        return false;
    }
    kf::ImportReport report;
    const QByteArray bytes = file.readAll();
    const bool ok = withLibrary(tr("Import"), [&](kf::ExperienceLibrary& lib) {
        report = lib.import_json(nlohmann::json::parse(bytes.toStdString()));
    });
    if (!ok) return false;
    reload();
    Q_EMIT libraryChanged();
    QString text = tr("Imported %1 patterns, %2 insights and %3 improvement records.")
                       .arg(report.patterns_imported)
                       .arg(report.insights_imported)
                       .arg(report.improvements_imported);
    if (!report.skipped.empty()) {
        QStringList skipped;
        for (const auto& s : report.skipped) skipped << QString::fromStdString(s);
        text += QLatin1Char('\n') + tr("Skipped:") + QLatin1Char('\n') + skipped.join(QLatin1Char('\n'));
        // Not modal: the entries that were imported are already in the list behind it.
        auto* box = new QMessageBox(QMessageBox::Information, tr("Import"), text, QMessageBox::Ok, this);
        box->setAttribute(Qt::WA_DeleteOnClose);
        box->open();
    }
    count_->setToolTip(text);
    return true;
}

bool LibraryView::exportTo(const QString& path) {
    std::string text;
    if (!withLibrary(tr("Export"), [&](kf::ExperienceLibrary& lib) { text = lib.export_json().dump(2); })) return false;
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(QByteArray::fromStdString(text)) < 0 || !file.commit()) {
        QMessageBox::warning(this, tr("Export"), tr("Cannot write %1: %2").arg(path, file.errorString()));
        return false;
    }
    return true;
}

}  // namespace kfgui
