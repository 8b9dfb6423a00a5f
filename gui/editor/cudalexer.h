#pragma once
#include <Qsci/qscilexercpp.h>

namespace kfgui {

/**
 * C++ highlighting plus CUDA: qualifiers and built-in variables as keywords, intrinsics and
 * vector types as secondary keywords (QsciLexerCPP's keyword set 2), so that a kernel reads
 * the way it does in an IDE that knows CUDA.
 */
class CudaLexer : public QsciLexerCPP {
    Q_OBJECT

public:
    explicit CudaLexer(QObject* parent = nullptr);

    const char* language() const override;
    /** Set 1: C++ and CUDA keywords; set 2: intrinsics, built-ins and vector types. */
    const char* keywords(int set) const override;
};

}  // namespace kfgui
