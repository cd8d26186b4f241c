// A Grass bot in C++: a random legal action at every decision (bots/PROTOCOL.md).
// Messages are one JSON object a line. The runner writes them compactly, "type" and "id"
// first, and action texts hold no quotes, so a little string searching reads what we need.
#include <iostream>
#include <random>
#include <string>
#include <vector>

static long long number_after(const std::string& line, const std::string& key) {
    size_t at = line.find("\"" + key + "\":");
    return at == std::string::npos ? 0 : std::stoll(line.substr(at + key.size() + 3));
}

static std::vector<std::string> legal_actions(const std::string& line) {
    std::vector<std::string> legal;
    size_t at = line.find("\"legal\":[") + 9;
    while (line[at] == '"') {
        size_t end = line.find('"', at + 1);
        legal.push_back(line.substr(at + 1, end - at - 1));
        at = end + 1 + (line[end + 1] == ',');
    }
    return legal;
}

int main() {
    std::mt19937_64 rng;
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.find("\"type\":\"hello\"") != std::string::npos) {
            rng.seed(number_after(line, "rng_seed"));
            std::cout << "{\"type\":\"ready\",\"protocol\":1}" << std::endl;  // endl flushes
        } else if (line.find("\"type\":\"act\"") != std::string::npos) {
            std::vector<std::string> legal = legal_actions(line);
            std::uniform_int_distribution<size_t> pick(0, legal.size() - 1);
            std::cout << "{\"type\":\"action\",\"id\":" << number_after(line, "id")
                      << ",\"action\":\"" << legal[pick(rng)] << "\"}" << std::endl;
        } else if (line.find("\"type\":\"game_end\"") != std::string::npos) {
            return 0;
        }
    }
}
