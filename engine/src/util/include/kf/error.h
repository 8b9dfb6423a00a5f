#pragma once
/** Error types thrown by the engine. Every message names what was wrong and where. */
#include <stdexcept>
#include <string>

namespace kf {

/** Base class of every error the engine throws on bad input or a failed operation. */
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/** An operation stopped on request (e.g. an evaluation the user cancelled): there is no result. */
class Cancelled : public Error {
public:
    using Error::Error;
};

/** A device that does not answer (no such GPU, a worker that does not start). */
class NoDevice : public Error {
public:
    using Error::Error;
};

/** A malformed task manifest: the file, the field (a JSON pointer-like path) and the reason. */
class TaskError : public Error {
public:
    TaskError(std::string file, std::string field, std::string reason)
        : Error(file + ": " + (field.empty() ? std::string() : field + ": ") + reason),
          file_(std::move(file)), field_(std::move(field)), reason_(std::move(reason)) {}
    const std::string& file() const { return file_; }
    const std::string& field() const { return field_; }
    const std::string& reason() const { return reason_; }

private:
    std::string file_, field_, reason_;
};

/** A malformed expression (size, work or constraint expression). */
class ExprError : public Error {
public:
    using Error::Error;
};

}  // namespace kf
