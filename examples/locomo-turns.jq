# LoCoMo to the body of POST /v1/conversations/{id}/turns, for one conversation:
#   jq --arg id conv-26 -f examples/locomo-turns.jq locomo-dev.json
# Turns get the times, roles and ids that "strata import" gives them.
.[] | select(.sample_id == $id) | .conversation as $c | {turns: [
  [$c | keys[] | select(test("^session_[0-9]+$"))] | sort_by(ltrimstr("session_") | tonumber)[] as $s
  | ($c[$s + "_date_time"] | strptime("%I:%M %p on %d %B, %Y") | mktime) as $t0
  | $c[$s] | to_entries[] | {
      ext_id: .value.dia_id, name: .value.speaker, content: .value.text, session_label: $s,
      role: (if .value.speaker == $c.speaker_a then "user" else "assistant" end),
      time: ($t0 + .key | todate),
      metadata: ({img_url: (.value.img_url | if type == "string" then [.] else . end),
                  blip_caption: .value.blip_caption, image_query: .value.query}
                 | with_entries(select(.value != null)) | if . == {} then null else . end)}]}
