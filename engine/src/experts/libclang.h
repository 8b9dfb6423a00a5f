#pragma once
// libclang's C API loaded at run time (dlopen), so that the engine builds and runs where
// libclang is absent: the recogniser then reads references token by token.
#include <string>
#include <vector>

#ifdef KF_HAVE_CLANG_C
#include <clang-c/Index.h>
#endif

namespace kf {

#ifdef KF_HAVE_CLANG_C
/** The clang_* functions the AST recogniser calls, resolved with dlsym. */
struct Libclang {
    decltype(&::clang_createIndex) createIndex;
    decltype(&::clang_disposeIndex) disposeIndex;
    decltype(&::clang_parseTranslationUnit2) parseTranslationUnit2;
    decltype(&::clang_disposeTranslationUnit) disposeTranslationUnit;
    decltype(&::clang_getTranslationUnitCursor) getTranslationUnitCursor;
    decltype(&::clang_getNumDiagnostics) getNumDiagnostics;
    decltype(&::clang_getDiagnostic) getDiagnostic;
    decltype(&::clang_getDiagnosticSeverity) getDiagnosticSeverity;
    decltype(&::clang_getDiagnosticSpelling) getDiagnosticSpelling;
    decltype(&::clang_getDiagnosticLocation) getDiagnosticLocation;
    decltype(&::clang_disposeDiagnostic) disposeDiagnostic;
    decltype(&::clang_visitChildren) visitChildren;
    decltype(&::clang_getCursorKind) getCursorKind;
    decltype(&::clang_getCursorKindSpelling) getCursorKindSpelling;
    decltype(&::clang_getCursorSpelling) getCursorSpelling;
    decltype(&::clang_getCString) getCString;
    decltype(&::clang_disposeString) disposeString;
    decltype(&::clang_getCursorExtent) getCursorExtent;
    decltype(&::clang_getCursorLocation) getCursorLocation;
    decltype(&::clang_getRangeStart) getRangeStart;
    decltype(&::clang_getRangeEnd) getRangeEnd;
    decltype(&::clang_getExpansionLocation) getExpansionLocation;
    decltype(&::clang_Location_isFromMainFile) locationIsFromMainFile;
    decltype(&::clang_tokenize) tokenize;
    decltype(&::clang_disposeTokens) disposeTokens;
    decltype(&::clang_getTokenSpelling) getTokenSpelling;
    decltype(&::clang_getTokenKind) getTokenKind;
    decltype(&::clang_getTokenExtent) getTokenExtent;
    decltype(&::clang_isCursorDefinition) isCursorDefinition;
    decltype(&::clang_isExpression) isExpression;
    decltype(&::clang_Cursor_getNumArguments) cursorGetNumArguments;
    decltype(&::clang_Cursor_getArgument) cursorGetArgument;
    decltype(&::clang_getCursorType) getCursorType;
    decltype(&::clang_getCanonicalType) getCanonicalType;
    decltype(&::clang_getTypeSpelling) getTypeSpelling;
    decltype(&::clang_getArrayElementType) getArrayElementType;
    decltype(&::clang_getArraySize) getArraySize;
    decltype(&::clang_getPointeeType) getPointeeType;
    decltype(&::clang_Type_getSizeOf) typeGetSizeOf;
    decltype(&::clang_Cursor_Evaluate) cursorEvaluate;
    decltype(&::clang_EvalResult_getKind) evalResultGetKind;
    decltype(&::clang_EvalResult_getAsDouble) evalResultGetAsDouble;
    decltype(&::clang_EvalResult_getAsLongLong) evalResultGetAsLongLong;
    decltype(&::clang_EvalResult_dispose) evalResultDispose;
    decltype(&::clang_getCursorReferenced) getCursorReferenced;

    std::string path;          ///< the library it was loaded from
    std::string resource_dir;  ///< clang's own headers (stddef.h ...), when found beside it
};
#else
struct Libclang;
#endif

/**
 * The library names tried in turn: KF_LIBCLANG alone when it is set, else the usual
 * sonames (libclang-14.so.1, libclang.so.1, libclang-15.so.1, libclang.so).
 */
std::vector<std::string> libclang_candidates();

/**
 * libclang loaded from the first candidate that opens and has every function, or null with
 * why not (each candidate's failure). Loaded once per candidate list and never unloaded.
 */
const Libclang* load_libclang(std::string* why);

}  // namespace kf
