#pragma once
/**
 * Turning a model's answer into a candidate: a full source in a fenced code block, or
 * SEARCH/REPLACE edits applied to the parent's source; then a static screen of the result
 * for calls and constructs the task forbids (vendor libraries, run-time loading, processes,
 * threads, side streams, results cached by pointer) so that a cheat never reaches the
 * compiler. An empty, truncated or unusable answer is an error with a reason, never a crash.
 */
#include <string>
#include <vector>

#include "kf/task.h"

namespace kf::llm {

struct EditBlock {
    std::string search;
    std::string replace;
};

struct ParsedAnswer {
    bool ok = false;
    std::string source;     ///< the child's full source
    std::string form;       ///< "full" or "diff"
    std::string rationale;  ///< the explanation outside the code, shortened
    std::string error;      ///< why not ok
};

/** Fenced code blocks (```cuda, ```cpp, ```c++, ```c, ```cu or bare ```), in order. */
std::vector<std::string> code_blocks(const std::string& text);
/** The SEARCH/REPLACE blocks of an answer, in order; throws kf::Error on an unterminated block. */
std::vector<EditBlock> edit_blocks(const std::string& text);
/**
 * Applies edits in order, each to the first occurrence of its SEARCH text (exact, else line
 * by line ignoring trailing whitespace). Throws kf::Error naming the block that does not match.
 */
std::string apply_edits(const std::string& source, const std::vector<EditBlock>& edits);
/** The text outside code blocks and edits, whitespace collapsed, at most max_chars. */
std::string rationale_of(const std::string& text, std::size_t max_chars = 400);
/** Parses an answer against the parent's source (edits are applied to it). */
ParsedAnswer parse_answer(const std::string& text, const std::string& parent_source);

/**
 * Static screen of a candidate's source (comments ignored): each finding says what was found
 * and why it is not allowed, e.g. "cublasSgemm (cuBLAS is not allowed by the task)".
 * Libraries the task allows (Rules::allowed_libraries) pass.
 */
std::vector<std::string> screen_source(const std::string& source, const Rules& rules);

}  // namespace kf::llm
