#include "settings/llmkeyring.h"

#include <memory>

#include <qt6keychain/keychain.h>

#include "settings/llmconfigfile.h"

namespace kfgui {

namespace {

/** The answers of one readKeys() call, collected until the last job has finished. */
struct KeyBatch {
    int remaining = 0;
    QMap<QString, QString> keys;
    bool available = true;
    QString problem;
};

}  // namespace

LlmKeyring::LlmKeyring(QObject* parent) : QObject(parent) {}

void LlmKeyring::readKeys(const QStringList& providers) {
    // With no provider yet, one read of an entry that is never written still tells whether
    // a keyring service answers.
    const QStringList names = providers.isEmpty() ? QStringList{QString()} : providers;
    auto batch = std::make_shared<KeyBatch>();
    batch->remaining = static_cast<int>(names.size());
    for (const QString& provider : names) {
        auto* job = new QKeychain::ReadPasswordJob(keyringService(), this);
        job->setAutoDelete(true);
        job->setInsecureFallback(false);  // never a plain-text copy of a key
        job->setKey(keyringKey(provider));
        connect(job, &QKeychain::Job::finished, this, [this, batch, provider](QKeychain::Job* j) {
            auto* read = static_cast<QKeychain::ReadPasswordJob*>(j);
            if (read->error() == QKeychain::NoError) {
                if (!provider.isEmpty() && !read->textData().isEmpty()) batch->keys.insert(provider, read->textData());
            } else if (read->error() != QKeychain::EntryNotFound) {
                batch->available = false;
                if (batch->problem.isEmpty()) batch->problem = read->errorString();
            }
            if (--batch->remaining == 0) Q_EMIT keysRead(batch->keys, batch->available, batch->problem);
        });
        job->start();
    }
}

void LlmKeyring::writeKey(const QString& provider, const QString& key) {
    QKeychain::Job* job = nullptr;
    if (key.isEmpty()) {
        job = new QKeychain::DeletePasswordJob(keyringService(), this);
    } else {
        auto* write = new QKeychain::WritePasswordJob(keyringService(), this);
        write->setTextData(key);
        job = write;
    }
    job->setAutoDelete(true);
    job->setInsecureFallback(false);
    job->setKey(keyringKey(provider));
    connect(job, &QKeychain::Job::finished, this, [this, provider](QKeychain::Job* j) {
        const bool ok = j->error() == QKeychain::NoError || (j->error() == QKeychain::EntryNotFound);
        Q_EMIT keyWritten(provider, ok, ok ? QString() : j->errorString());
    });
    job->start();
}

}  // namespace kfgui
