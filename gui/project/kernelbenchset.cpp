#include "project/kernelbenchset.h"

#include <algorithm>

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QSaveFile>

#include <nlohmann/json.hpp>

#include "kf/error.h"
#include "kf/kernelbench_search.h"
#include "paths.h"

namespace kfgui {

QString kernelBenchFile(const QString& projectDir) { return projectDir + QStringLiteral("/kernelbench.json"); }

std::vector<KernelBenchProblem> kernelBenchProblems(const KernelBenchSet& set) {
    const std::filesystem::path root = toPath(set.root);
    if (set.root.isEmpty() || !std::filesystem::is_directory(root))
        throw kf::Error(QCoreApplication::translate("kfgui::KernelBenchSet", "The KernelBench folder %1 does not exist.").arg(QDir::toNativeSeparators(set.root)).toStdString());
    // kf::kb::level_dir throws naming the folders it looked for.
    const auto all = kf::kb::list_problems(root, set.level);
    if (all.empty())
        throw kf::Error(QCoreApplication::translate("kfgui::KernelBenchSet", "%1 holds no KernelBench problems (files named <id>_<Name>.py).")
                            .arg(QDir::toNativeSeparators(fromPath(kf::kb::level_dir(root, set.level))))
                            .toStdString());
    std::vector<kf::kb::Problem> chosen;
    if (set.problems.trimmed().isEmpty()) {
        chosen = all;
    } else {
        QStringList missing;
        for (int id : kf::kb::parse_id_list(set.problems.trimmed().toStdString())) {
            auto it = std::find_if(all.begin(), all.end(), [id](const kf::kb::Problem& p) { return p.id == id; });
            if (it == all.end()) missing << QString::number(id);
            else chosen.push_back(*it);
        }
        if (!missing.isEmpty())
            throw kf::Error(QCoreApplication::translate("kfgui::KernelBenchSet", "Level %1 has no problem %2.").arg(set.level).arg(missing.join(QStringLiteral(", "))).toStdString());
    }
    std::vector<KernelBenchProblem> out;
    for (const auto& p : chosen) {
        KernelBenchProblem kp;
        kp.problem = p;
        kp.root = set.root;
        // The engine's reason reads "not supported: …"; shown as a sentence.
        kp.unsupported = fromUtf8(kf::kb::unsupported_reason(p));
        if (!kp.unsupported.isEmpty()) kp.unsupported[0] = kp.unsupported[0].toUpper();
        out.push_back(std::move(kp));
    }
    return out;
}

std::vector<KernelBenchSet> loadKernelBenchSets(const QString& projectDir, QString* error) {
    std::vector<KernelBenchSet> sets;
    QFile file(kernelBenchFile(projectDir));
    if (!file.exists()) return sets;
    if (!file.open(QIODevice::ReadOnly)) {
        if (error) *error = QCoreApplication::translate("kfgui::KernelBenchSet", "Cannot read %1: %2").arg(file.fileName(), file.errorString());
        return sets;
    }
    const nlohmann::json j = nlohmann::json::parse(file.readAll().toStdString(), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("sets") || !j["sets"].is_array()) {
        if (error) *error = QCoreApplication::translate("kfgui::KernelBenchSet", "%1 is not a KernelBench problem set file (a JSON object with \"sets\").").arg(file.fileName());
        return sets;
    }
    for (const auto& s : j["sets"]) {
        if (!s.is_object() || !s.contains("kb") || !s["kb"].is_string() || !s.contains("level") || !s["level"].is_number_integer())
            continue;
        KernelBenchSet set;
        set.root = fromUtf8(s["kb"].get<std::string>());
        set.level = s["level"].get<int>();
        set.problems = fromUtf8(s.value("problems", std::string()));
        sets.push_back(set);
    }
    return sets;
}

bool saveKernelBenchSets(const QString& projectDir, const std::vector<KernelBenchSet>& sets, QString* error) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& s : sets)
        list.push_back({{"kb", s.root.toStdString()}, {"level", s.level}, {"problems", s.problems.toStdString()}});
    const nlohmann::json j = {{"format", 1}, {"sets", list}};
    QSaveFile file(kernelBenchFile(projectDir));
    if (!file.open(QIODevice::WriteOnly) || file.write(QByteArray::fromStdString(j.dump(2) + "\n")) < 0 || !file.commit()) {
        if (error) *error = QCoreApplication::translate("kfgui::KernelBenchSet", "Cannot write %1: %2").arg(file.fileName(), file.errorString());
        return false;
    }
    return true;
}

}  // namespace kfgui
