#include "settings/llmproviderspage.h"

#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "kf/llm/config.h"
#include "kf/llm/experts.h"
#include "settings/llmconfigfile.h"
#include "settings/llmkeyring.h"

namespace kfgui {

using nlohmann::json;

namespace {

QString text(const QTableWidget* t, int row, int column) {
    const QTableWidgetItem* item = t->item(row, column);
    return item ? item->text().trimmed() : QString();
}

QStringList splitList(const QString& s) {
    QStringList out;
    for (const QString& part : s.split(QLatin1Char(','), Qt::SkipEmptyParts))
        if (!part.trimmed().isEmpty()) out << part.trimmed();
    return out;
}

std::string str(const QString& s) { return s.toStdString(); }
QString qstr(const json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_string() ? QString::fromStdString(j[key].get<std::string>()) : QString();
}

}  // namespace

LlmProvidersPage::LlmProvidersPage(QWidget* parent)
    : QWidget(parent),
      providers_(new QTableWidget(0, ProviderColumnCount, this)),
      roles_(new QTableWidget(0, RoleColumnCount, this)),
      maxTokens_(new QSpinBox(this)),
      maxCost_(new QDoubleSpinBox(this)),
      maxCalls_(new QSpinBox(this)),
      key_(new QLineEdit(this)),
      storeKey_(new QPushButton(tr("Store key in keyring"), this)),
      keyring_(new QLabel(this)),
      error_(new QLabel(this)),
      keys_(new LlmKeyring(this)) {
    setObjectName(QStringLiteral("llmProvidersPage"));
    initProviderTable();
    auto* add = new QPushButton(tr("Add provider"), this);
    add->setObjectName(QStringLiteral("addProviderButton"));
    auto* remove = new QPushButton(tr("Remove provider"), this);
    remove->setObjectName(QStringLiteral("removeProviderButton"));

    initKeyWidgets();
    initRoleTable();
    initBudgets();

    QGroupBox* providerBox = providerGroup(add, remove);
    QGroupBox* roleBox = roleGroup();
    QGroupBox* budgetBox = budgetGroup();
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(providerBox, 1);
    layout->addWidget(roleBox, 1);
    layout->addWidget(budgetBox);
    layout->addWidget(error_);

    connect(add, &QPushButton::clicked, this, [this] { providers_->selectRow(addProvider()); });
    connect(remove, &QPushButton::clicked, this, [this] {
        const int row = providers_->currentRow();
        if (row >= 0) providers_->removeRow(row);
        updateKeyRow();
    });
    connect(providers_, &QTableWidget::currentCellChanged, this, [this] { updateKeyRow(); });
    connect(storeKey_, &QPushButton::clicked, this, &LlmProvidersPage::storeKey);
    connectKeyring();

    QString loadError;
    setConfig(loadLlmConfig(&loadError));
    if (!loadError.isEmpty()) error_->setText(loadError);
}

void LlmProvidersPage::initProviderTable() {
    providers_->setObjectName(QStringLiteral("llmProviders"));
    providers_->setHorizontalHeaderLabels({tr("Name"), tr("Kind"), tr("Base URL"), tr("Models"), tr("Input per Mtok"),
                                           tr("Output per Mtok"), tr("Concurrency"), tr("Key variable")});
    // Every column as wide as its header and cells (the kind's combo box too); the URL takes the rest.
    providers_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    providers_->horizontalHeader()->setSectionResizeMode(UrlColumn, QHeaderView::Stretch);
    providers_->setSelectionBehavior(QAbstractItemView::SelectRows);
    providers_->setSelectionMode(QAbstractItemView::SingleSelection);
    providers_->setToolTip(tr("Models: the model ids the endpoint serves, separated by commas. Key variable: the "
                              "environment variable that holds the key when it is not in the keyring."));
}

void LlmProvidersPage::initKeyWidgets() {
    key_->setObjectName(QStringLiteral("llmKeyEdit"));
    key_->setEchoMode(QLineEdit::Password);
    key_->setPlaceholderText(tr("API key of the selected provider"));
    storeKey_->setObjectName(QStringLiteral("storeKeyButton"));
    keyring_->setObjectName(QStringLiteral("keyringState"));
    keyring_->setWordWrap(true);
    error_->setObjectName(QStringLiteral("llmConfigError"));
    error_->setWordWrap(true);
    error_->setStyleSheet(QStringLiteral("color: #b02020"));
}

void LlmProvidersPage::initRoleTable() {
    roles_->setObjectName(QStringLiteral("llmRoles"));
    roles_->setHorizontalHeaderLabels({tr("Expert role"), tr("Models (empty: every model)")});
    roles_->horizontalHeader()->setSectionResizeMode(RoleNameColumn, QHeaderView::ResizeToContents);
    roles_->horizontalHeader()->setSectionResizeMode(RoleModelsColumn, QHeaderView::Stretch);
    roles_->verticalHeader()->hide();
    roles_->setWordWrap(false);
    for (const kf::llm::RoleSpec& r : kf::llm::role_specs()) {
        const int row = roles_->rowCount();
        roles_->insertRow(row);
        auto* name = new QTableWidgetItem(QString::fromStdString(r.title));
        name->setData(Qt::UserRole, QString::fromStdString(r.id));
        name->setFlags(Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
        name->setCheckState(Qt::Checked);
        roles_->setItem(row, RoleNameColumn, name);
        roles_->setItem(row, RoleModelsColumn, new QTableWidgetItem);
    }
}

void LlmProvidersPage::initBudgets() {
    maxTokens_->setObjectName(QStringLiteral("llmMaxTokens"));
    maxTokens_->setRange(0, 2000000000);
    maxTokens_->setSpecialValueText(tr("unlimited"));
    maxCost_->setObjectName(QStringLiteral("llmMaxCost"));
    maxCost_->setRange(0, 1e6);
    maxCost_->setDecimals(2);
    maxCost_->setSpecialValueText(tr("unlimited"));
    maxCalls_->setObjectName(QStringLiteral("llmMaxCalls"));
    maxCalls_->setRange(0, 1000000);
    maxCalls_->setSpecialValueText(tr("unlimited"));
}

QGroupBox* LlmProvidersPage::providerGroup(QPushButton* add, QPushButton* remove) {
    auto* providerButtons = new QHBoxLayout;
    providerButtons->addWidget(add);
    providerButtons->addWidget(remove);
    providerButtons->addStretch(1);
    auto* keyRow = new QHBoxLayout;
    keyRow->addWidget(new QLabel(tr("Key:"), this));
    keyRow->addWidget(key_, 1);
    keyRow->addWidget(storeKey_);

    auto* providerBox = new QGroupBox(tr("Providers"), this);
    auto* providerLayout = new QVBoxLayout(providerBox);
    providerLayout->addWidget(providers_, 1);
    providerLayout->addLayout(providerButtons);
    providerLayout->addLayout(keyRow);
    providerLayout->addWidget(keyring_);
    return providerBox;
}

QGroupBox* LlmProvidersPage::roleGroup() {
    auto* roleBox = new QGroupBox(tr("Models per expert role"), this);
    auto* roleLayout = new QVBoxLayout(roleBox);
    roleLayout->addWidget(roles_);
    // All the roles in view without scrolling.
    roles_->setMinimumHeight(roles_->horizontalHeader()->sizeHint().height() +
                             roles_->verticalHeader()->defaultSectionSize() * roles_->rowCount() + 2 * roles_->frameWidth());
    return roleBox;
}

QGroupBox* LlmProvidersPage::budgetGroup() {
    auto* budgetBox = new QGroupBox(tr("Budgets of a run (0: unlimited)"), this);
    auto* budgetLayout = new QFormLayout(budgetBox);
    budgetLayout->addRow(tr("Tokens:"), maxTokens_);
    budgetLayout->addRow(tr("Cost:"), maxCost_);
    budgetLayout->addRow(tr("Calls:"), maxCalls_);
    return budgetBox;
}

void LlmProvidersPage::connectKeyring() {
    connect(keys_, &LlmKeyring::keysRead, this, [this](const QMap<QString, QString>& keys, bool available, const QString& problem) {
        keyringAvailable_ = available;
        storedKeys_.clear();
        for (auto it = keys.begin(); it != keys.end(); ++it) storedKeys_.insert(it.key(), true);
        if (!available)
            keyring_->setText(tr("No keyring service is available (%1): each provider's key is taken from its "
                                 "environment variable.").arg(problem));
        updateKeyRow();
        Q_EMIT keyringChecked(available);
    });
    connect(keys_, &LlmKeyring::keyWritten, this, [this](const QString& provider, bool ok, const QString& problem) {
        storeKey_->setEnabled(true);
        if (ok) {
            storedKeys_.insert(provider, true);
            keyring_->setText(tr("The key of %1 is in the keyring.").arg(provider));
        } else {
            keyringAvailable_ = false;
            keyring_->setText(tr("The key could not be stored: no keyring service is available (%1). Set the "
                                 "provider's environment variable instead.").arg(problem));
        }
        Q_EMIT keyringChecked(ok);
    });
}

int LlmProvidersPage::addProvider() {
    const int row = providers_->rowCount();
    providers_->insertRow(row);
    auto* kind = new QComboBox(providers_);
    kind->addItem(tr("OpenAI-compatible"), QStringLiteral("openai"));
    kind->addItem(tr("Anthropic"), QStringLiteral("anthropic"));
    providers_->setCellWidget(row, KindColumn, kind);
    for (int c = 0; c < ProviderColumnCount; ++c)
        if (c != KindColumn) providers_->setItem(row, c, new QTableWidgetItem);
    providers_->item(row, ConcurrencyColumn)->setText(QStringLiteral("4"));
    providers_->item(row, PriceInColumn)->setText(QStringLiteral("0"));
    providers_->item(row, PriceOutColumn)->setText(QStringLiteral("0"));
    return row;
}

void LlmProvidersPage::setConfig(const json& config) {
    original_ = config.is_object() ? config : json::object();
    providers_->setRowCount(0);
    const json providers = original_.value("providers", json::array());
    const json models = original_.value("models", json::array());
    for (const json& p : providers) {
        if (!p.is_object()) continue;
        const int row = addProvider();
        const QString name = qstr(p, "name");
        providers_->item(row, NameColumn)->setText(name);
        auto* kind = static_cast<QComboBox*>(providers_->cellWidget(row, KindColumn));
        kind->setCurrentIndex(qMax(0, kind->findData(qstr(p, "kind"))));
        providers_->item(row, UrlColumn)->setText(qstr(p, "base_url"));
        providers_->item(row, KeyEnvColumn)->setText(qstr(p, "api_key_env"));
        providers_->item(row, ConcurrencyColumn)->setText(QString::number(p.value("concurrency", 4)));
        QStringList names;
        for (const json& m : models)
            if (m.is_object() && (qstr(m, "provider") == name || (!m.contains("provider") && providers.size() == 1)))
                names << qstr(m, "name");
        providers_->item(row, ModelsColumn)->setText(names.join(QStringLiteral(", ")));
        // One price per provider on the page: the first priced model's.
        if (p.contains("prices") && p["prices"].is_object() && !p["prices"].empty()) {
            const json& price = p["prices"].begin().value();
            providers_->item(row, PriceInColumn)->setText(QString::number(price.value("input", 0.0)));
            providers_->item(row, PriceOutColumn)->setText(QString::number(price.value("output", 0.0)));
        }
    }
    const json roles = original_.value("roles", json());
    for (int row = 0; row < roles_->rowCount(); ++row) {
        QTableWidgetItem* name = roles_->item(row, RoleNameColumn);
        const std::string id = name->data(Qt::UserRole).toString().toStdString();
        bool enabled = true;
        QStringList roleModels;
        if (roles.is_object()) {
            enabled = roles.contains(id);
            if (enabled && roles[id].is_boolean()) enabled = roles[id].get<bool>();
            if (enabled && roles[id].is_object()) {
                enabled = roles[id].value("enabled", true);
                for (const json& m : roles[id].value("models", json::array()))
                    if (m.is_string()) roleModels << QString::fromStdString(m.get<std::string>());
            }
        }
        name->setCheckState(enabled ? Qt::Checked : Qt::Unchecked);
        roles_->item(row, RoleModelsColumn)->setText(roleModels.join(QStringLiteral(", ")));
    }
    const json budgets = original_.value("budgets", json::object());
    maxTokens_->setValue(static_cast<int>(qMin<qint64>(budgets.value("max_tokens", qint64{0}), 2000000000)));
    maxCost_->setValue(budgets.value("max_cost", 0.0));
    maxCalls_->setValue(static_cast<int>(qMin<qint64>(budgets.value("max_calls", qint64{0}), 1000000)));
    error_->clear();
    if (providers_->rowCount() > 0) providers_->selectRow(0);
    keys_->readKeys(llmProviderNames(original_));
    updateKeyRow();
}

json LlmProvidersPage::config(QString* error) const {
    json out = original_;
    json providers = json::array();
    json models = json::array();
    std::map<std::string, json> before;
    for (const json& p : original_.value("providers", json::array()))
        if (p.is_object()) before[p.value("name", std::string())] = p;
    QString problem;
    for (int row = 0; row < providers_->rowCount() && problem.isEmpty(); ++row) {
        const QString name = text(providers_, row, NameColumn);
        const std::string key = str(name);
        json p = before.count(key) ? before[key] : json::object();
        p["name"] = key;
        p["kind"] = str(static_cast<QComboBox*>(providers_->cellWidget(row, KindColumn))->currentData().toString());
        p["base_url"] = str(text(providers_, row, UrlColumn));
        const QString env = text(providers_, row, KeyEnvColumn);
        if (env.isEmpty()) p.erase("api_key_env");
        else p["api_key_env"] = str(env);
        bool ok = false;
        const int concurrency = text(providers_, row, ConcurrencyColumn).toInt(&ok);
        if (!ok) problem = tr("Provider %1: the concurrency must be a whole number.").arg(row + 1);
        p["concurrency"] = concurrency;
        bool okIn = false, okOut = false;
        const double in = text(providers_, row, PriceInColumn).toDouble(&okIn);
        const double outPrice = text(providers_, row, PriceOutColumn).toDouble(&okOut);
        if (problem.isEmpty() && (!okIn || !okOut))
            problem = tr("Provider %1: the prices must be numbers (money per million tokens).").arg(row + 1);
        const QStringList names = splitList(text(providers_, row, ModelsColumn));
        if (problem.isEmpty() && names.isEmpty()) problem = tr("Provider %1: name at least one model.").arg(row + 1);
        json prices = json::object();
        for (const QString& m : names) {
            models.push_back({{"name", str(m)}, {"provider", key}});
            if (in > 0 || outPrice > 0) prices[str(m)] = {{"input", in}, {"output", outPrice}};
        }
        if (prices.empty()) p.erase("prices");
        else p["prices"] = prices;
        providers.push_back(p);
    }
    out["providers"] = providers;
    out["models"] = models;
    json roles = json::object();
    const json oldRoles = original_.value("roles", json::object());
    for (int row = 0; row < roles_->rowCount(); ++row) {
        const QTableWidgetItem* name = roles_->item(row, RoleNameColumn);
        const std::string id = name->data(Qt::UserRole).toString().toStdString();
        json r = oldRoles.is_object() && oldRoles.contains(id) && oldRoles[id].is_object() ? oldRoles[id] : json::object();
        r["enabled"] = name->checkState() == Qt::Checked;
        json ms = json::array();
        for (const QString& m : splitList(text(roles_, row, RoleModelsColumn))) ms.push_back(str(m));
        if (ms.empty()) r.erase("models");
        else r["models"] = ms;
        roles[id] = r;
    }
    out["roles"] = roles;
    out["budgets"] = {{"max_tokens", maxTokens_->value()}, {"max_cost", maxCost_->value()}, {"max_calls", maxCalls_->value()}};
    if (problem.isEmpty()) validateLlmConfig(out, &problem);
    if (error) *error = problem;
    return out;
}

bool LlmProvidersPage::save() {
    if (providers_->rowCount() == 0) {
        // No provider left: no configuration (the run dock then offers no LLM experts).
        error_->clear();
        return !QFile::exists(llmConfigPath()) || QFile::remove(llmConfigPath());
    }
    QString problem;
    const json cfg = config(&problem);
    if (problem.isEmpty()) saveLlmConfig(cfg, &problem);
    error_->setText(problem.isEmpty() ? QString() : tr("Not saved: %1").arg(problem));
    return problem.isEmpty();
}

QString LlmProvidersPage::errorText() const { return error_->text(); }
QString LlmProvidersPage::keyringText() const { return keyring_->text(); }

QString LlmProvidersPage::currentProvider() const {
    const int row = providers_->currentRow();
    return row >= 0 ? text(providers_, row, NameColumn) : QString();
}

void LlmProvidersPage::updateKeyRow() {
    const QString provider = currentProvider();
    key_->clear();
    key_->setEnabled(!provider.isEmpty() && keyringAvailable_);
    storeKey_->setEnabled(!provider.isEmpty() && keyringAvailable_);
    if (!keyringAvailable_) return;  // the label says why, and where keys come from instead
    if (provider.isEmpty()) keyring_->setText(tr("Select a provider to store its key in the keyring."));
    else if (storedKeys_.value(provider)) keyring_->setText(tr("The key of %1 is in the keyring.").arg(provider));
    else keyring_->setText(tr("No key of %1 in the keyring: its environment variable is used, if set.").arg(provider));
}

void LlmProvidersPage::storeKey() {
    const QString provider = currentProvider();
    if (provider.isEmpty()) return;
    storeKey_->setEnabled(false);
    keys_->writeKey(provider, key_->text());
    key_->clear();  // the key stays only in the keyring job until it is written
}

}  // namespace kfgui
