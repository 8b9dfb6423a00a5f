#pragma once
#include <QMap>
#include <QWidget>

#include <nlohmann/json.hpp>

class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace kfgui {

class LlmKeyring;

/**
 * Settings page of the LLM experts: the providers (name, kind, base URL, models, price per
 * million tokens in and out, concurrency, environment variable of the key), the models each
 * expert role may use, and the run's budgets. Saved as the engine's LLM configuration
 * (llmconfigfile.h) without keys; a provider's key goes to the OS keyring, or is taken from
 * its environment variable when there is no keyring.
 */
class LlmProvidersPage : public QWidget {
    Q_OBJECT

public:
    enum ProviderColumn { NameColumn, KindColumn, UrlColumn, ModelsColumn, PriceInColumn, PriceOutColumn,
                          ConcurrencyColumn, KeyEnvColumn, ProviderColumnCount };
    enum RoleColumn { RoleNameColumn, RoleModelsColumn, RoleColumnCount };

    explicit LlmProvidersPage(QWidget* parent = nullptr);

    /** Fills the page from a configuration in the engine's format (null: empty). */
    void setConfig(const nlohmann::json& config);
    /** The page as the engine's configuration; `error` says what is wrong when it is not valid. */
    nlohmann::json config(QString* error = nullptr) const;
    /** Validates and saves (nothing is saved with no provider and no file yet); shows the error. */
    bool save();

    /** Adds an empty provider row (what the Add button does); returns its row. */
    int addProvider();
    QTableWidget* providers() const { return providers_; }
    QTableWidget* roles() const { return roles_; }
    QSpinBox* maxTokens() const { return maxTokens_; }
    QDoubleSpinBox* maxCost() const { return maxCost_; }
    QSpinBox* maxCalls() const { return maxCalls_; }
    QLineEdit* keyEdit() const { return key_; }
    QPushButton* storeKeyButton() const { return storeKey_; }
    QString errorText() const;
    QString keyringText() const;
    /** False once a keyring read or write found no keyring service. */
    bool keyringAvailable() const { return keyringAvailable_; }

Q_SIGNALS:
    /** The keyring answered the page's first read (or a write). */
    void keyringChecked(bool available);

private:
    // The constructor's parts, in the order it calls them.
    void initProviderTable();
    void initKeyWidgets();
    void initRoleTable();
    void initBudgets();
    QGroupBox* providerGroup(QPushButton* add, QPushButton* remove);  ///< the table, its buttons, the key row
    QGroupBox* roleGroup();
    QGroupBox* budgetGroup();
    /** The keyring's answers: keys read (and whether there is a keyring), a key written. */
    void connectKeyring();

    void storeKey();
    void updateKeyRow();
    QString currentProvider() const;

    nlohmann::json original_;  ///< fields the page does not show are kept as they were
    QTableWidget* providers_;
    QTableWidget* roles_;
    QSpinBox* maxTokens_;
    QDoubleSpinBox* maxCost_;
    QSpinBox* maxCalls_;
    QLineEdit* key_;
    QPushButton* storeKey_;
    QLabel* keyring_;
    QLabel* error_;
    LlmKeyring* keys_;
    bool keyringAvailable_ = true;
    QMap<QString, bool> storedKeys_;  ///< providers with a key in the keyring (the key itself is not kept)
};

}  // namespace kfgui
