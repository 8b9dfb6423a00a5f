#pragma once
// kf_solve's body as a small loop-nest model read from libclang's AST: loops, declarations of
// scalars and pointers, assignments, early exits; expressions as trees with casts dropped
// (except a floating-point value converted to an integer, which truncates; widenings to 64
// bits are marked) and the math functions under one name each (fmaxf, std::max -> max). The
// AST recogniser (recognise_clang.cpp) matches op-class shapes on it.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kf {

struct Libclang;

namespace nest {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

/**
 * An expression: a number, a name, an array read name[index], an operator, a call, or a
 * floating-point value converted to an integer type (Cast: truncated toward zero).
 */
struct Expr {
    enum class Kind { Number, Name, Index, Unary, Binary, Call, Select, Cast };
    Kind kind = Kind::Number;
    std::string text;  ///< the name, the array (Index), the operator, the function or (Cast) the integer type
    double value = 0;  ///< Number
    bool integer = false;  ///< Number: an integer literal; Call: a call whose value is an integer (abs of an int)
    /** An integer expression the C code converts to floating point (a cast, or a float operand beside it). */
    bool converted = false;
    /** Number: a float (not double) literal. Converted: the floating type it becomes ("float", "double"). */
    bool f32 = false;
    std::string cast;
    /**
     * An integer expression the C code widens to a 64-bit integer type (`(size_t)idx[j] * d`,
     * an operand beside a 64-bit one): that type, so that its arithmetic is written 64-bit.
     */
    std::string widened;
    std::vector<ExprPtr> args;  ///< operands; Index: {index}; Select: {condition, then, else}; Cast: {value}

    static ExprPtr number(double v, bool integer);
    static ExprPtr name(const std::string& n);
    static ExprPtr binary(const std::string& op, ExprPtr a, ExprPtr b);
};

/** A function defined in the reference that a statement kept as written calls: its definition as written. */
struct Helper {
    std::string name, text;
    unsigned offset = 0;  ///< where the definition starts in the file
};

struct Stmt;
using Block = std::vector<Stmt>;

/** A statement of the model. */
struct Stmt {
    /** Opaque: a statement inside a loop that the model lacks, kept as written (read_kf_solve's keep_opaque). */
    enum class Kind { For, Decl, Assign, If, Return, Continue, Break, Opaque };
    /** Array: a local std::vector of float or double, or a C array of numbers, its length in
     *  `init`, zero-filled unless `elements` gives its first values. */
    enum class Type { Integer, Floating, Pointer, Array };
    Kind kind = Kind::Assign;
    int line = 0;
    std::string var;             ///< For: the loop variable; Decl: the declared name
    ExprPtr start, bound;        ///< For: var from start while var < bound (bound + 1 with <=), or > with step < 0
    long long step = 1;          ///< For: ++var, var += step; --var, var -= count (step -count)
    Type type = Type::Floating;  ///< Decl
    std::string type_name;       ///< Decl: the declared type as C spells it ("float", "const float *", "int")
    ExprPtr init;                ///< Decl: its initialiser (may be null)
    /** Decl of a C array: its first values as written (numbers: `{0.25f, 0.5f, 0.25f}`), the
     *  rest 0; empty where it is filled with 0. */
    std::vector<ExprPtr> elements;
    ExprPtr target;              ///< Assign: a name or an array read
    std::string op;              ///< Assign: =, +=, -=, *=, /=
    ExprPtr value;               ///< Assign
    ExprPtr cond;                ///< If
    Block body, else_body;       ///< For: the body; If: then and else
    /**
     * Opaque: its source text, why the model lacks it, the names it uses, those it assigns (or
     * passes to a call) and those it declares.
     */
    std::string text, why;
    std::vector<std::string> names, assigned, declared;
    /** Opaque: the reference's functions it calls, directly or through each other, in the file's order. */
    std::vector<Helper> helpers;
};

/**
 * Reads kf_solve's definition from `source` (parsed as the file `path`, C++17, syntax only)
 * with `kf_task.h` beside it given by `header`; `include_dir` is added to the include path.
 * Null with why (a parse error, a construct the model lacks, with its line) when it cannot.
 * With `keep_opaque`, a statement inside a loop that the model lacks becomes an Opaque
 * statement (its text, the names it uses and assigns) rather than a refusal, and `why` names
 * the first such construct; the recognisers read without it.
 */
std::optional<Block> read_kf_solve(const Libclang& clang, const std::string& path, const std::string& source,
                                   const std::string& header, const std::string& include_dir, std::string& why,
                                   bool keep_opaque = false);

/** The expression written back as the computation language (kf/computation.h) writes it. */
std::string to_text(const ExprPtr& e);

}  // namespace nest
}  // namespace kf
