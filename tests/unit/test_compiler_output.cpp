// Parsing of recorded compiler output (tests/data/compiler/, captured from nvcc 13.0 and
// g++ 12.2; see the README there) into diagnostics and ptxas resource usage.
#include <QtTest>

#include <map>
#include <string>
#include <vector>

#include "kf/compile.h"
#include "testsupport.h"

using kf::Diagnostic;
using kf::ResourceUsage;

namespace {

std::string recorded(const std::string& name) { return kftest::read_file(kftest::data("compiler/" + name)); }

/** One line per diagnostic: "tool file:line:column severity: message". */
QStringList show(const std::vector<Diagnostic>& diags) {
    QStringList out;
    for (const auto& d : diags) {
        const char* sev = d.severity == kf::Severity::Error ? "error" : d.severity == kf::Severity::Warning ? "warning" : "note";
        out << QString::fromStdString(d.tool + " " + d.file + ":" + std::to_string(d.line) + ":" +
                                      std::to_string(d.column) + " " + sev + ": " + d.message);
    }
    return out;
}

QStringList parse(const std::string& file, const std::string& source_name = "candidate.cu") {
    return show(kf::parse_compiler_output(recorded(file), source_name));
}

QString show(const ResourceUsage& r) {
    return QString::fromStdString(r.kernel + " reg=" + std::to_string(r.registers) + " smem=" + std::to_string(r.shared_bytes) +
                                  " cmem=" + std::to_string(r.constant_bytes) + " stack=" + std::to_string(r.stack_bytes) +
                                  " spill_st=" + std::to_string(r.spill_store_bytes) +
                                  " spill_ld=" + std::to_string(r.spill_load_bytes));
}

QStringList usage(const std::string& text) {
    QStringList out;
    for (const auto& r : kf::parse_ptxas_usage(text)) out << show(r);
    return out;
}

}  // namespace

class TestCompilerOutput : public QObject {
    Q_OBJECT

private slots:
    void nvccUndefinedIdentifier() {
        QCOMPARE(parse("nvcc_undefined.txt"),
                 QStringList{R"(nvcc candidate.cu:3:23 error: identifier "foo" is undefined)"});
    }

    void nvccSeveralErrorsInOrder() {
        QCOMPARE(parse("nvcc_multi.txt"),
                 (QStringList{
                     R"(nvcc candidate.cu:7:15 error: identifier "undefined_thing" is undefined)",
                     R"(nvcc candidate.cu:9:1 error: expected a ";")",
                     R"(nvcc candidate.cu:11:17 error: more than one instance of overloaded function "kf_solve" has "C" linkage)",
                     R"(nvcc candidate.cu:12:32 error: argument of type "const double *" is incompatible with parameter of type "const float *")",
                 }));
    }

    void nvccWarningsAndPtxasWarning() {
        // The "#177-D" number and the "Remark: ..." hint are dropped.
        QCOMPARE(parse("nvcc_ok_usage.txt"),
                 (QStringList{
                     R"(nvcc candidate.cu:8:9 warning: variable "unused" was declared but never referenced)",
                     "ptxas :0:0 warning: For profile sm_90 adjusting per thread register count of 16 to lower bound of 24",
                 }));
    }

    void nvccContinuationLinesAndNote() {
        // "argument types are" sits between the message and the echoed source line.
        QCOMPARE(parse("nvcc_overload.txt"),
                 (QStringList{
                     R"(nvcc candidate.cu:4:12 error: no instance of function template "twice" matches the argument list; argument types are: (float, int))",
                     R"(nvcc candidate.cu:1:49 note: candidate function template "twice" failed deduction)",
                 }));
    }

    void nvccColumnRealignedAgainstSource() {
        // nvcc echoes `__device__` as `__attribute__((device))`; with the real source at hand
        // the caret maps back to "twice" in the line as written.
        std::map<std::string, std::string> files = {
            {"candidate.cu",
             "template <typename T> __device__ T twice(T a, T b) { return a + b; }\n\n"
             "__global__ void k(float* y, int n) {\n    y[0] = twice(y[1], n);\n}\n"}};
        QCOMPARE(show(kf::parse_compiler_output(recorded("nvcc_overload.txt"), "candidate.cu", files)),
                 (QStringList{
                     R"(nvcc candidate.cu:4:12 error: no instance of function template "twice" matches the argument list; argument types are: (float, int))",
                     R"(nvcc candidate.cu:1:36 note: candidate function template "twice" failed deduction)",
                 }));
    }

    void nvccTabsCountAsOneColumn() {
        QCOMPARE(parse("nvcc_tabs.txt"), QStringList{R"(nvcc candidate.cu:3:9 error: identifier "bar" is undefined)"});
        std::map<std::string, std::string> files = {{"candidate.cu", "__global__ void k(float* y) {\n\tint\tq = 1;\n\ty[0] = bar;\n}\n"}};
        QCOMPARE(show(kf::parse_compiler_output(recorded("nvcc_tabs.txt"), "candidate.cu", files)),
                 QStringList{R"(nvcc candidate.cu:3:9 error: identifier "bar" is undefined)"});
    }

    void nvccInstantiationContextIgnored() {
        QCOMPARE(parse("nvcc_template_recursion.txt"),
                 QStringList{R"(nvcc candidate.cu:1:61 error: excessive recursion at instantiation of member "Deep<N>::value [with N=200]")"});
    }

    void nvccErrorLimit() {
        QStringList got = parse("nvcc_limit.txt");
        QCOMPARE(got.size(), 100);
        QCOMPARE(got.front(), QString(R"(nvcc candidate.cu:2:12 error: identifier "undefined_0" is undefined)"));
        QCOMPARE(got.back(), QString(R"(nvcc candidate.cu:101:13 error: identifier "undefined_99" is undefined)"));
    }

    void nvccCatastrophicError() {
        // Hand-written in the EDG front end's format (nvcc 13 preprocesses with gcc, so a
        // missing include no longer reaches the front end; see missingIncludeThroughNvcc).
        std::string out =
            "/home/u/.cache/kernel-foundry/compile/ab12/candidate.cu(12): catastrophic error: cannot open source file \"foo.h\"\n"
            "  #include \"foo.h\"\n"
            "           ^\n\n"
            "1 catastrophic error detected in the compilation of \"/home/u/.cache/kernel-foundry/compile/ab12/kf_glue.cu\".\n"
            "Compilation terminated.\n";
        QCOMPARE(show(kf::parse_compiler_output(out, "candidate.cu")),
                 QStringList{R"(nvcc candidate.cu:12:10 error: cannot open source file "foo.h")"});
    }

    void missingIncludeThroughNvcc() {
        QCOMPARE(parse("nvcc_missing_include.txt"),
                 QStringList{"g++ candidate.cu:1:10 error: missing_header.cuh: No such file or directory"});
    }

    void hostWarningsFromBothPassesDeduplicated() {
        // nvcc reports the same front-end warning for the device and the host pass; then the
        // host compiler (-Xcompiler -Wall) adds its own, in gcc's format.
        QCOMPARE(parse("nvcc_host_warnings.txt"),
                 (QStringList{
                     R"(nvcc candidate.cu:5:20 warning: variable "host_only" is used before its value is set)",
                     "g++ candidate.cu:5:7 warning: ‘host_only’ is used uninitialized [-Wuninitialized]",
                     "g++ candidate.cu:4:5 note: ‘host_only’ declared here",
                 }));
    }

    void gxxErrorsAndWarnings() {
        QCOMPARE(parse("gxx_errors_wall.txt", "candidate.cpp"),
                 (QStringList{
                     "g++ candidate.cpp:10:31 error: ‘undefined_value’ was not declared in this scope",
                     "g++ candidate.cpp:12:26 error: conversion from ‘int’ to non-scalar type ‘std::vector<int>’ requested",
                     "g++ candidate.cpp:13:12 error: return-statement with a value, in function returning ‘void’ [-fpermissive]",
                     "g++ candidate.cpp:7:9 warning: unused variable ‘unused’ [-Wunused-variable]",
                 }));
    }

    void gxxNotesKeepOrderWithoutDuplicates() {
        QStringList got = parse("gxx_notes.txt", "candidate.cpp");
        QCOMPARE(got.size(), 12);  // 14 messages in the output, two repeated verbatim
        QCOMPARE(got[0], QString("g++ candidate.cpp:7:39 error: no match for ‘operator+’ (operand types are ‘Acc’ and ‘const float’)"));
        QCOMPARE(got[1], QString("g++ candidate.cpp:8:20 error: no matching function for call to ‘max(float&, double)’"));
        QCOMPARE(got[2], QString("g++ stl_algobase.h:254:5 note: candidate: ‘template<class _Tp> constexpr const _Tp& std::max(const _Tp&, const _Tp&)’"));
        QCOMPARE(got[3], QString("g++ stl_algobase.h:254:5 note: template argument deduction/substitution failed:"));
        QCOMPARE(got[4], QString("g++ candidate.cpp:8:20 note: deduced conflicting types for parameter ‘const _Tp’ (‘float’ and ‘double’)"));
        QCOMPARE(got[9], QString("g++ candidate.cpp:8:20 note: mismatched types ‘std::initializer_list<_Tp>’ and ‘float’"));
        QCOMPARE(got.count(got[4]), 1);
    }

    void gxxFatalError() {
        QCOMPARE(parse("gxx_fatal.txt", "candidate.cpp"),
                 QStringList{"g++ candidate.cpp:1:10 error: nope.hpp: No such file or directory"});
    }

    void gxxDriverError() {
        QCOMPARE(parse("gxx_driver.txt", "candidate.cpp"),
                 QStringList{"g++ :0:0 error: unrecognized command-line option ‘-fbogus-option’"});
    }

    void ptxasErrors() {
        QCOMPARE(parse("nvcc_ptxas_error.txt"),
                 (QStringList{
                     "ptxas :0:0 error: Arguments mismatch for instruction 'mov'",
                     "ptxas :0:0 error: Unknown symbol '%nonexistent_reg'",
                     "ptxas :0:0 error: Ptx assembly aborted due to errors",
                 }));
        QCOMPARE(parse("nvcc_extern_device.txt"), QStringList{"ptxas :0:0 error: Unresolved extern function '_Z11missing_devf'"});
    }

    void nvlinkAndNvccFatal() {
        QCOMPARE(parse("nvcc_nvlink.txt"),
                 QStringList{"nvlink :0:0 error: Undefined reference to '_Z11missing_devf' in "
                             "'/tmp/tmpxft_000015a0_00000000-11_kf_glue.o'"});
        QCOMPARE(parse("nvcc_fatal_flag.txt"), QStringList{"nvcc :0:0 error: Unknown option '--bogus-flag'"});
        QCOMPARE(parse("nvcc_fatal_arch.txt"), QStringList{"nvcc :0:0 error: Unsupported gpu architecture 'sm_12'"});
    }

    void linkerErrors() {
        // "collect2: error: ld returned 1 exit status" adds nothing when ld spoke itself.
        QCOMPARE(parse("nvcc_missing_lib.txt"), QStringList{"ld :0:0 error: cannot find -lnosuchlib_kf: No such file or directory"});
        QCOMPARE(parse("ld_undefined.txt", "candidate.cpp"),
                 QStringList{"ld kf_glue.cpp:0:0 error: undefined reference to `external_helper(float)' (in function `kf_solve')"});
        QCOMPARE(parse("ld_undefined_g.txt", "candidate.cpp"),
                 QStringList{"ld kf_glue.cpp:2:0 error: undefined reference to `external_helper(float)' (in function `kf_solve')"});
        QCOMPARE(show(kf::parse_compiler_output("collect2: error: ld returned 1 exit status\n", "candidate.cpp")),
                 QStringList{"ld :0:0 error: ld returned 1 exit status"});
    }

    void sourceNameAndDirectories() {
        std::string out = "/a/b/c/my_kernel.cu(4): error: expected a \";\"\n  }\n  ^\n\n"
                          "/x/y/kf_task.h(2): warning: something in the header\n\n"
                          "/x/y/kf_glue.cu:3:1: error: glue problem\r\n";
        QCOMPARE(show(kf::parse_compiler_output(out, "my_kernel.cu")),
                 (QStringList{
                     R"(nvcc my_kernel.cu:4:1 error: expected a ";")",
                     "nvcc kf_task.h:2:0 warning: something in the header",
                     "g++ kf_glue.cu:3:1 error: glue problem",
                 }));
    }

    void nothingToReport() {
        QVERIFY(kf::parse_compiler_output("", "candidate.cu").empty());
        QVERIFY(kf::parse_compiler_output(recorded("nvcc_spill.txt"), "candidate.cu").empty());
        QVERIFY(kf::parse_compiler_output(recorded("nvcc_device_function.txt"), "candidate.cu").empty());
    }

    void ptxasUsageTwoKernels() {
        QCOMPARE(usage(recorded("nvcc_ok_usage.txt")),
                 (QStringList{
                     "_Z5spillPKfPfi reg=24 smem=0 cmem=0 stack=256 spill_st=0 spill_ld=0",
                     "_Z5scalePKfPfi reg=10 smem=1024 cmem=0 stack=0 spill_st=0 spill_ld=0",
                 }));
    }

    void ptxasUsageSpills() {
        QCOMPARE(usage(recorded("nvcc_spill.txt")),
                 QStringList{"_Z8pressurePKfPfi reg=32 smem=0 cmem=0 stack=1480 spill_st=1664 spill_ld=2716"});
    }

    void ptxasUsageSkipsDeviceFunctions() {
        // The non-inlined helper gets its own "Function properties" block after the kernel
        // (whole-program) or before it (-rdc=true); neither is a kernel.
        QCOMPARE(usage(recorded("nvcc_device_function.txt")),
                 QStringList{"_Z1kPfi reg=25 smem=256 cmem=0 stack=64 spill_st=0 spill_ld=0"});
        QCOMPARE(usage(recorded("nvcc_device_function_rdc.txt")),
                 QStringList{"_Z1kPfi reg=24 smem=256 cmem=0 stack=0 spill_st=0 spill_ld=0"});
    }

    void ptxasUsageOlderFormat() {
        // Hand-written in the format of CUDA 11/12 (which still printed cmem), with fields
        // missing and in a different order.
        std::string out =
            "ptxas info    : 0 bytes gmem, 8 bytes cmem[3]\n"
            "ptxas info    : Compiling entry function '_Z6kernelPfi' for 'sm_80'\n"
            "ptxas info    : Function properties for _Z6kernelPfi\n"
            "    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
            "ptxas info    : Used 32 registers, used 1 barriers, 4096 bytes smem, 400 bytes cmem[0]\n"
            "ptxas info    : Compiling entry function '_Z4tinyv' for 'sm_80'\n"
            "ptxas info    : Function properties for _Z4tinyv\n"
            "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
            "ptxas info    : Used 4 registers, 352 bytes cmem[0]\n"
            "ptxas info    : Compiling entry function '_Z5otherv' for 'sm_80'\n"
            "ptxas info    : Used 6 registers, 352 bytes cmem[0], 100 bytes smem, 16 bytes cmem[2]\n";
        QCOMPARE(usage(out), (QStringList{
                                 "_Z6kernelPfi reg=32 smem=4096 cmem=400 stack=8 spill_st=4 spill_ld=12",
                                 "_Z4tinyv reg=4 smem=0 cmem=352 stack=0 spill_st=0 spill_ld=0",
                                 "_Z5otherv reg=6 smem=100 cmem=352 stack=0 spill_st=0 spill_ld=0",
                             }));
        QVERIFY(kf::parse_ptxas_usage("").empty());
        QVERIFY(kf::parse_ptxas_usage(recorded("gxx_errors.txt")).empty());
    }
};

QTEST_GUILESS_MAIN(TestCompilerOutput)
#include "test_compiler_output.moc"
