#include "candidate/candidateview.h"

namespace kfgui {

CandidateView::CandidateView(QWidget* parent) : QWidget(parent) {}

void CandidateView::showCandidate(const QString& projectDir, qint64 candidateId) {
    Q_UNUSED(projectDir);
    Q_UNUSED(candidateId);
}

}  // namespace kfgui
