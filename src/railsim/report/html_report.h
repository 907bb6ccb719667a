// `railsim report`: a self-contained page (DIR/index.html) with a figure for
// every question of the study (study/report_study.h) and, beside it, the CSV
// of the data it draws. Charts are Chart.js (Debian's libjs-chart.js),
// inlined into the page at build time, so it opens offline from a file.
#pragma once

#include <string>
#include <vector>

#include "railsim/study/report_study.h"

namespace railsim::report {

struct ReportFile {
  std::string name;  ///< relative to the report directory
  std::string contents;
};

/// The files of the report: index.html, one CSV per figure and the traffic
/// heatmap (PNG). `version` is printed in the page's footer.
std::vector<ReportFile> BuildReport(const study::ReportStudy& study, const std::string& version);

/// {"out": dir, "index": "dir/index.html", "files": [names...], "notes":
/// [...]}: what `railsim report --format json` prints once the files are
/// written; `notes` say what the inputs left out (ReportInputs::notes).
std::string ReportFilesJson(const std::string& dir, const std::vector<std::string>& files,
                            const std::vector<std::string>& notes);

}  // namespace railsim::report
