#pragma once
// Test data for test_task.cpp, kept out of the moc-parsed file (moc does not read raw strings).
#include <nlohmann/json.hpp>

namespace taskcases {

inline nlohmann::json valid_manifest() {

    return nlohmann::json::parse(R"J({
      "format": 1, "name": "t", "op_class": "elementwise", "sizes": ["rows", "cols"],
      "tensors": [
        {"name": "x", "role": "input", "dtype": "f32", "shape": ["rows", "cols"]},
        {"name": "m", "role": "input", "dtype": "bool", "shape": ["cols"], "init": {"dist": "bernoulli", "p": 0.8}},
        {"name": "y", "role": "output", "dtype": "bf16", "shape": ["rows", "ceil_div(cols, 2)"]}
      ],
      "params": [{"name": "eps", "dtype": "f64", "value": 1e-5}],
      "tolerance": {"atol": 1e-3, "rtol": 1e-3},
      "work": {"flops": "2 * rows * cols", "bytes": "4 * rows * cols + rows * cols"},
      "cases": [
        {"name": "primary", "primary": true, "sizes": {"rows": 64, "cols": 100}},
        {"name": "odd", "sizes": {"rows": 3, "cols": 7}, "params": {"eps": 0.5}}
      ],
      "reference": {"cuda": "reference.cu", "host": "reference.cpp"}
    })J");
}

struct BadManifest {
    const char* tag;
    const char* patch;  // JSON merge patch applied to valid_manifest()
    const char* field;
    const char* reason;
};

inline const BadManifest kBadManifests[] = {
    {"format", "{\"format\": 2}", "format", "unsupported format"},
    {"no name", "{\"name\": null}", "name", "required field is missing"},
    {"bad dtype", "{\"tensors\": [{\"name\": \"x\", \"role\": \"input\", \"dtype\": \"f8\", \"shape\": [\"rows\"]}, {\"name\": \"y\", \"role\": \"output\", \"dtype\": \"f32\", \"shape\": [\"rows\"]}]}", "tensors[0].dtype", "unknown dtype 'f8'"},
    {"unknown size", "{\"tensors\": [{\"name\": \"x\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"row\"]}, {\"name\": \"y\", \"role\": \"output\", \"dtype\": \"f32\", \"shape\": [\"rows\"]}]}", "tensors[0].shape[0]", "unknown name 'row'"},
    {"bad expr", "{\"work\": {\"flops\": \"2 * (rows\", \"bytes\": \"rows\"}}", "work.flops", "expected ')'"},
    {"no output", "{\"tensors\": [{\"name\": \"x\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"rows\"]}]}", "tensors", "at least one output"},
    {"bad role", "{\"tensors\": [{\"name\": \"x\", \"role\": \"inout\", \"dtype\": \"f32\", \"shape\": [\"rows\"]}]}", "tensors[0].role", "expected \"input\" or \"output\""},
    {"unknown field", "{\"colour\": \"blue\"}", "colour", "unknown field"},
    {"missing size", "{\"cases\": [{\"name\": \"primary\", \"primary\": true, \"sizes\": {\"rows\": 4}}, {\"name\": \"odd\", \"sizes\": {\"rows\": 3, \"cols\": 7}}]}", "cases[0].sizes.cols", "missing"},
    {"no validation", "{\"cases\": [{\"name\": \"primary\", \"primary\": true, \"sizes\": {\"rows\": 4, \"cols\": 4}}]}", "cases", "at least one validation case"},
    {"two primaries", "{\"cases\": [{\"name\": \"a\", \"primary\": true, \"sizes\": {\"rows\": 4, \"cols\": 4}}, {\"name\": \"b\", \"primary\": true, \"sizes\": {\"rows\": 4, \"cols\": 4}}]}", "cases", "exactly one primary case"},
    {"negative tol", "{\"tolerance\": {\"atol\": -1, \"rtol\": 0}}", "tolerance", "must not be negative"},
    {"bad dist", "{\"tensors\": [{\"name\": \"x\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"rows\"], \"init\": {\"dist\": \"cauchy\"}}, {\"name\": \"y\", \"role\": \"output\", \"dtype\": \"f32\", \"shape\": [\"rows\"]}]}", "tensors[0].init.dist", "unknown distribution"},
    {"zero dim", "{\"tensors\": [{\"name\": \"x\", \"role\": \"input\", \"dtype\": \"f32\", \"shape\": [\"rows - 64\"]}, {\"name\": \"y\", \"role\": \"output\", \"dtype\": \"f32\", \"shape\": [\"rows\"]}]}", "tensors[0].shape[0]", "must be a positive integer"},
    {"i32 overflow", "{\"cases\": [{\"name\": \"primary\", \"primary\": true, \"sizes\": {\"rows\": 4000000000, \"cols\": 4}}, {\"name\": \"odd\", \"sizes\": {\"rows\": 3, \"cols\": 7}}]}", "cases[0].sizes.rows", "exceeds the i32 size_type"},
    {"missing reference", "{\"reference\": {\"cuda\": \"nothere.cu\"}}", "reference.cuda", "file not found"},
    {"duplicate name", "{\"params\": [{\"name\": \"x\", \"dtype\": \"f32\", \"value\": 1}]}", "params[0].name", "already declared"},
};

}  // namespace taskcases
