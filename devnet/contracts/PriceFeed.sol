// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title PriceFeed (devnet): an ETH price feed shaped like Chainlink's AggregatorV3Interface
/// @notice Not a protocol contract: the devnet's stand-in for the ETH / USD and ETH / EUR feeds the service reads
///         at every report's block (chain/price-feeds.ts). The owner (the deployer) sets each round's answer;
///         round ids start at 1 and increase by one; a round's startedAt and updatedAt are the block time of its
///         update and answeredInRound is the round itself. Before the first update there is no data:
///         latestRoundData reverts "No data present", as Chainlink's proxies do.
contract PriceFeed {
    error Unauthorized(address caller);

    /// @notice Chainlink's event of a new answer.
    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);

    struct Round {
        int256 answer;
        uint256 updatedAt;
    }

    address public immutable owner;
    uint8 public constant decimals = 8;
    uint256 public constant version = 4;
    string public description;

    uint80 private latestRound;
    mapping(uint80 => Round) private rounds;

    constructor(string memory description_) {
        owner = msg.sender;
        description = description_;
    }

    /// @notice Starts the next round with `answer` (any sign: readers must refuse a non-positive price).
    function updateAnswer(int256 answer) external {
        if (msg.sender != owner) revert Unauthorized(msg.sender);
        uint80 roundId = latestRound + 1;
        latestRound = roundId;
        rounds[roundId] = Round(answer, block.timestamp);
        emit AnswerUpdated(answer, roundId, block.timestamp);
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        return getRoundData(latestRound);
    }

    function getRoundData(uint80 roundId)
        public
        view
        returns (uint80, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        require(roundId > 0 && roundId <= latestRound, "No data present");
        Round storage round = rounds[roundId];
        return (roundId, round.answer, round.updatedAt, round.updatedAt, roundId);
    }
}
