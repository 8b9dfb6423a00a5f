#pragma once
#include <QMap>
#include <QObject>
#include <QString>
#include <QStringList>

namespace kfgui {

/**
 * The LLM providers' keys in the OS keyring (QtKeychain; service "kernel-foundry", key
 * "llm/<provider>"). Every call returns at once and answers with a signal: the keyring may
 * ask the user or the desktop's secret service, which must never block the GUI thread.
 * Keys live in memory only; they are never written to settings, projects, logs or events.
 */
class LlmKeyring : public QObject {
    Q_OBJECT

public:
    explicit LlmKeyring(QObject* parent = nullptr);

    /** Reads the keys of `providers` (none: only probes the keyring); keysRead() once every read has answered. */
    void readKeys(const QStringList& providers);
    /** Stores (an empty key: removes) a provider's key; keyWritten() when done. */
    void writeKey(const QString& provider, const QString& key);

Q_SIGNALS:
    /**
     * The keys found (providers without a stored key are absent). `available` is false when
     * no keyring service answered; `problem` then says why, and keys come from the providers'
     * environment variables instead.
     */
    void keysRead(const QMap<QString, QString>& keys, bool available, const QString& problem);
    void keyWritten(const QString& provider, bool ok, const QString& error);
};

}  // namespace kfgui
