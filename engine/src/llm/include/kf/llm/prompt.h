#pragma once
/**
 * Prompt templates: Markdown files in resources/prompts/ that users may edit, one per expert
 * role, with a small placeholder syntax:
 *   {{name}}              the value of `name` (an unknown name is an error)
 *   {{#name}}...{{/name}} the enclosed text only when `name` is not empty
 *   {{> file}}            the template file.md of the same folder, rendered in place
 * and the compact renderings of a diagnosis and of other members that fill them.
 */
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kf::llm {

using TemplateValues = std::map<std::string, std::string>;
/** Returns the text of an included template by name; throws kf::Error when there is none. */
using TemplateLoader = std::function<std::string(const std::string& name)>;

/** Renders a template; throws kf::Error for an unknown placeholder, an unclosed section or an include loop. */
std::string render_template(const std::string& text, const TemplateValues& values, const TemplateLoader& load = {});

/** Templates read from one folder (name.md); cached after the first read. Thread-safe. */
class PromptTemplates {
public:
    explicit PromptTemplates(std::filesystem::path dir);
    const std::filesystem::path& dir() const { return dir_; }
    /** The raw text of name.md; throws kf::Error when missing. */
    std::string text(const std::string& name) const;
    /** Renders name.md with its includes. */
    std::string render(const std::string& name, const TemplateValues& values) const;

private:
    std::filesystem::path dir_;
    mutable std::mutex mu_;
    mutable std::map<std::string, std::string> cache_;
};

/**
 * A diagnosis record (kf::Diagnosis JSON) in a few lines for a prompt: status and message,
 * compiler errors with the source lines they point at, correctness statistics, timing and
 * roofline, resource usage, profiler metrics and failed integrity checks. Null: "".
 */
std::string render_diagnosis(const nlohmann::json& diagnosis, const std::string& source, std::size_t max_chars = 6000);

/** At most max_lines lines / max_chars characters of a source, with a note when cut. */
std::string excerpt(const std::string& source, std::size_t max_lines, std::size_t max_chars);

}  // namespace kf::llm
