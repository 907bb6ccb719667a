#include "railsim/report/preset_report.h"

#include "railsim/report/csv.h"
#include "railsim/report/json_objects.h"
#include "railsim/report/table.h"

namespace railsim::report {

std::string PresetsTable(const std::vector<spec::PresetInfo>& presets) {
  TextTable t;
  t.AddColumn("kind", TextTable::Align::kLeft);
  t.AddColumn("name", TextTable::Align::kLeft);
  t.AddColumn("description", TextTable::Align::kLeft);
  for (const spec::PresetInfo& p : presets) {
    std::string description = p.description.size() > 100 ? p.description.substr(0, 97) + "..." : p.description;
    t.AddRow({spec::PresetKindName(p.kind), p.name, description});
  }
  return t.Render() + "\n'railsim presets show NAME' prints one; any flag that takes a preset also takes a JSON file of the same shape.\n";
}

std::string PresetsCsv(const std::vector<spec::PresetInfo>& presets) {
  CsvTable t({"kind", "name", "description"});
  for (const spec::PresetInfo& p : presets) t.AddRow({spec::PresetKindName(p.kind), p.name, p.description});
  return t.Render();
}

std::string PresetsJson(const std::vector<spec::PresetInfo>& presets) {
  Json list = Json::array();
  for (const spec::PresetInfo& p : presets) {
    Json j;
    j["kind"] = spec::PresetKindName(p.kind);
    j["name"] = p.name;
    j["description"] = p.description;
    list.push_back(j);
  }
  Json doc;
  doc["presets"] = list;
  return doc.dump(2) + "\n";
}

}  // namespace railsim::report
