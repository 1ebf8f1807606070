// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import "./Shared.sol";

/// @title RedeemManager (devnet)
/// @notice The redeem queue (requests stacked by height) and the withdrawal stack (events stacked by height),
///         with the mainnet claim math: for each withdrawal event a request crosses,
///         matched = min(req.amount, we.height + we.amount - req.height),
///         eth = floor(matched * we.withdrawnEth / we.amount) capped at floor(matched * req.maxRedeemableEth / req.amount);
///         the excess goes to the exceeding-ETH buffer that River pulls at the next report.
///         A partial claim raises req.height and lowers req.amount by `matched` and lowers
///         req.maxRedeemableEth by the ETH paid (the v1.2 semantics, in both versions).
/// @dev RedeemManagerV1_0 and RedeemManagerV1_2 inherit this contract and declare no storage of their own.
abstract contract RedeemManagerBase is Initializable {
    struct RedeemRequest {
        uint256 amount;
        uint256 maxRedeemableEth;
        address recipient;
        uint256 height;
        address initiator;
    }

    struct WithdrawalEvent {
        uint256 amount;
        uint256 withdrawnEth;
        uint256 height;
    }

    event RequestedRedeem(address indexed recipient, uint256 height, uint256 amount, uint256 maxRedeemableEth, uint32 id);
    event ReportedWithdrawal(uint256 height, uint256 amount, uint256 ethAmount, uint32 id);
    event SatisfiedRedeemRequest(
        uint32 indexed redeemRequestId,
        uint32 indexed withdrawalEventId,
        uint256 lsEthAmountSatisfied,
        uint256 ethAmountSatisfied,
        uint256 lsEthAmountRemaining,
        uint256 ethAmountExceeding
    );
    event ClaimedRedeemRequest(
        uint32 indexed redeemRequestId,
        address indexed recipient,
        uint256 ethAmount,
        uint256 lsEthAmount,
        uint256 remainingLsEthAmount
    );
    event SetRedeemDemand(uint256 oldRedeemDemand, uint256 newRedeemDemand);
    event SetRiver(address river);

    error Unauthorized(address caller);
    error InvalidZeroAmount();
    error InvalidZeroAddress();
    error WithdrawalExceedsRedeemDemand(uint256 withdrawalAmount, uint256 redeemDemand);
    error IncompatibleArrayLengths();
    error RedeemRequestOutOfBounds(uint256 id);
    error WithdrawalEventOutOfBounds(uint256 id);
    error RedeemRequestAlreadyClaimed(uint256 id);
    error DoesNotMatch(uint256 redeemRequestId, uint256 withdrawalEventId);
    error ClaimRecipientIsDenied();
    error ClaimInitiatorIsDenied();
    error ClaimRedeemFailed(address recipient, bytes rdata);
    error Reentrancy();

    int64 internal constant RESOLVE_UNSATISFIED = -1;
    int64 internal constant RESOLVE_OUT_OF_BOUNDS = -2;
    int64 internal constant RESOLVE_FULLY_CLAIMED = -3;
    uint8 internal constant CLAIM_FULLY_CLAIMED = 0;
    uint8 internal constant CLAIM_PARTIALLY_CLAIMED = 1;
    uint8 internal constant CLAIM_SKIPPED = 2;

    address internal river;
    RedeemRequest[] internal redeemRequests;
    WithdrawalEvent[] internal withdrawalEvents;
    uint256 internal redeemDemand;
    uint256 internal bufferedExceedingEth;
    bool internal locked;

    /// @notice Initializer version 0: the River it serves.
    function initializeRedeemManagerV1(address river_) external init(0) {
        if (river_ == address(0)) revert InvalidZeroAddress();
        river = river_;
        emit SetRiver(river_);
    }

    modifier onlyRiver() {
        if (msg.sender != river) revert Unauthorized(msg.sender);
        _;
    }

    modifier nonReentrant() {
        if (locked) revert Reentrancy();
        locked = true;
        _;
        locked = false;
    }

    // ------------------------------------------------------------------ reads

    function getRiver() external view returns (address) {
        return river;
    }

    function getRedeemRequestCount() external view returns (uint256) {
        return redeemRequests.length;
    }

    function getWithdrawalEventCount() external view returns (uint256) {
        return withdrawalEvents.length;
    }

    function getWithdrawalEventDetails(uint32 withdrawalEventId) external view returns (WithdrawalEvent memory) {
        return withdrawalEvents[withdrawalEventId];
    }

    function getRedeemDemand() external view returns (uint256) {
        return redeemDemand;
    }

    function getBufferedExceedingEth() external view returns (uint256) {
        return bufferedExceedingEth;
    }

    /// @notice For each request: the id of the withdrawal event covering its current height, or
    ///         -1 (not satisfied yet), -2 (out of bounds), -3 (fully claimed).
    function resolveRedeemRequests(uint32[] calldata redeemRequestIds)
        external
        view
        returns (int64[] memory withdrawalEventIds)
    {
        withdrawalEventIds = new int64[](redeemRequestIds.length);
        uint256 stackTop = 0;
        uint256 eventCount = withdrawalEvents.length;
        if (eventCount > 0) {
            WithdrawalEvent storage lastEvent = withdrawalEvents[eventCount - 1];
            stackTop = lastEvent.height + lastEvent.amount;
        }
        for (uint256 i = 0; i < redeemRequestIds.length; ++i) {
            uint256 id = redeemRequestIds[i];
            if (id >= redeemRequests.length) {
                withdrawalEventIds[i] = RESOLVE_OUT_OF_BOUNDS;
                continue;
            }
            RedeemRequest storage request = redeemRequests[id];
            if (request.amount == 0) {
                withdrawalEventIds[i] = RESOLVE_FULLY_CLAIMED;
            } else if (request.height >= stackTop) {
                withdrawalEventIds[i] = RESOLVE_UNSATISFIED;
            } else {
                withdrawalEventIds[i] = int64(int256(_findWithdrawalEvent(request.height)));
            }
        }
    }

    // ------------------------------------------------------------------ River entry points

    /// @notice Records a request for shares River already moved here; maxRedeemableEth is the amount's
    ///         value at the current rate. DEVIATION: the initiator is the transaction's origin (the user who
    ///         called River.requestRedeem; every devnet sender is an account).
    function requestRedeem(uint256 lsEthAmount, address recipient) external onlyRiver returns (uint32 redeemRequestId) {
        address initiator = tx.origin;
        if (lsEthAmount == 0) revert InvalidZeroAmount();
        if (recipient == address(0)) revert InvalidZeroAddress();
        redeemRequestId = uint32(redeemRequests.length);
        uint256 height = 0;
        if (redeemRequestId != 0) {
            RedeemRequest storage previous = redeemRequests[redeemRequestId - 1];
            height = previous.height + previous.amount;
        }
        uint256 maxRedeemableEth = IRiver(river).underlyingBalanceFromShares(lsEthAmount);
        redeemRequests.push(
            RedeemRequest({
                amount: lsEthAmount,
                maxRedeemableEth: maxRedeemableEth,
                recipient: recipient,
                height: height,
                initiator: initiator
            })
        );
        _setRedeemDemand(redeemDemand + lsEthAmount);
        emit RequestedRedeem(recipient, height, lsEthAmount, maxRedeemableEth, redeemRequestId);
    }

    /// @notice Stacks a withdrawal event of `lsEthWithdrawable` shares paid with msg.value ETH.
    function reportWithdraw(uint256 lsEthWithdrawable) external payable onlyRiver {
        if (lsEthWithdrawable > redeemDemand) revert WithdrawalExceedsRedeemDemand(lsEthWithdrawable, redeemDemand);
        uint32 id = uint32(withdrawalEvents.length);
        uint256 height = 0;
        if (id != 0) {
            WithdrawalEvent storage previous = withdrawalEvents[id - 1];
            height = previous.height + previous.amount;
        }
        withdrawalEvents.push(WithdrawalEvent({amount: lsEthWithdrawable, withdrawnEth: msg.value, height: height}));
        _setRedeemDemand(redeemDemand - lsEthWithdrawable);
        emit ReportedWithdrawal(height, lsEthWithdrawable, msg.value, id);
    }

    /// @notice Sends up to `max` of the exceeding-ETH buffer back to River.
    function pullExceedingEth(uint256 max) external onlyRiver {
        uint256 amount = bufferedExceedingEth < max ? bufferedExceedingEth : max;
        if (amount == 0) return;
        bufferedExceedingEth -= amount;
        IRiver(river).sendRedeemManagerExceedingFunds{value: amount}();
    }

    // ------------------------------------------------------------------ claims

    function claimRedeemRequests(uint32[] calldata redeemRequestIds, uint32[] calldata withdrawalEventIds)
        external
        nonReentrant
        returns (uint8[] memory claimStatuses)
    {
        return _claimRedeemRequests(redeemRequestIds, withdrawalEventIds, true, type(uint16).max);
    }

    function claimRedeemRequests(
        uint32[] calldata redeemRequestIds,
        uint32[] calldata withdrawalEventIds,
        bool skipAlreadyClaimed,
        uint16 depth
    ) external nonReentrant returns (uint8[] memory claimStatuses) {
        return _claimRedeemRequests(redeemRequestIds, withdrawalEventIds, skipAlreadyClaimed, depth);
    }

    // ------------------------------------------------------------------ internals

    struct Claim {
        uint32 requestId;
        uint32 eventId;
        uint256 height;
        uint256 amount;
        uint256 maxRedeemableEth;
        uint256 lsEthTotal;
        uint256 ethTotal;
    }

    function _claimRedeemRequests(
        uint32[] calldata redeemRequestIds,
        uint32[] calldata withdrawalEventIds,
        bool skipAlreadyClaimed,
        uint16 depth
    ) internal returns (uint8[] memory claimStatuses) {
        if (redeemRequestIds.length != withdrawalEventIds.length) revert IncompatibleArrayLengths();
        claimStatuses = new uint8[](redeemRequestIds.length);
        IAllowlist allowlist = IAllowlist(IRiver(river).getAllowlist());
        for (uint256 i = 0; i < redeemRequestIds.length; ++i) {
            Claim memory claim;
            claim.requestId = redeemRequestIds[i];
            claim.eventId = withdrawalEventIds[i];
            if (claim.requestId >= redeemRequests.length) revert RedeemRequestOutOfBounds(claim.requestId);
            if (claim.eventId >= withdrawalEvents.length) revert WithdrawalEventOutOfBounds(claim.eventId);
            RedeemRequest storage request = redeemRequests[claim.requestId];
            address recipient = request.recipient;
            if (allowlist.isDenied(recipient)) revert ClaimRecipientIsDenied();
            if (request.initiator != recipient && allowlist.isDenied(request.initiator)) {
                revert ClaimInitiatorIsDenied();
            }
            if (request.amount == 0) {
                if (!skipAlreadyClaimed) revert RedeemRequestAlreadyClaimed(claim.requestId);
                claimStatuses[i] = CLAIM_SKIPPED;
                continue;
            }
            WithdrawalEvent storage first = withdrawalEvents[claim.eventId];
            if (request.height < first.height || request.height >= first.height + first.amount) {
                revert DoesNotMatch(claim.requestId, claim.eventId);
            }
            claim.height = request.height;
            claim.amount = request.amount;
            claim.maxRedeemableEth = request.maxRedeemableEth;
            _walkWithdrawalEvents(claim, depth);
            request.height = claim.height;
            request.amount = claim.amount;
            request.maxRedeemableEth = claim.maxRedeemableEth;
            claimStatuses[i] = claim.amount == 0 ? CLAIM_FULLY_CLAIMED : CLAIM_PARTIALLY_CLAIMED;
            (bool success, bytes memory rdata) = recipient.call{value: claim.ethTotal}("");
            if (!success) revert ClaimRedeemFailed(recipient, rdata);
            emit ClaimedRedeemRequest(claim.requestId, recipient, claim.ethTotal, claim.lsEthTotal, claim.amount);
        }
    }

    /// @dev Consumes the request against consecutive withdrawal events, starting at claim.eventId, while the
    ///      request has an amount left, events remain and the depth allows it. One SatisfiedRedeemRequest per event.
    function _walkWithdrawalEvents(Claim memory claim, uint16 depth) internal {
        uint256 eventCount = withdrawalEvents.length;
        while (true) {
            WithdrawalEvent memory we = withdrawalEvents[claim.eventId];
            uint256 available = we.height + we.amount - claim.height;
            uint256 matched = claim.amount < available ? claim.amount : available;
            uint256 eth = (matched * we.withdrawnEth) / we.amount;
            uint256 cap = (matched * claim.maxRedeemableEth) / claim.amount;
            uint256 exceeding = 0;
            if (eth > cap) {
                exceeding = eth - cap;
                bufferedExceedingEth += exceeding;
                eth = cap;
            }
            claim.height += matched;
            claim.amount -= matched;
            claim.maxRedeemableEth -= eth;
            claim.lsEthTotal += matched;
            claim.ethTotal += eth;
            emit SatisfiedRedeemRequest(claim.requestId, claim.eventId, matched, eth, claim.amount, exceeding);
            if (claim.amount == 0 || claim.eventId + 1 >= eventCount || depth == 0) return;
            claim.eventId += 1;
            depth -= 1;
        }
    }

    /// @dev Index of the withdrawal event with height <= position < height + amount (position is below the
    ///      stack top): the last event whose height is <= position.
    function _findWithdrawalEvent(uint256 position) internal view returns (uint256) {
        uint256 low = 0;
        uint256 high = withdrawalEvents.length - 1;
        while (low < high) {
            uint256 mid = (low + high + 1) / 2;
            if (withdrawalEvents[mid].height <= position) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        return low;
    }

    function _setRedeemDemand(uint256 newDemand) internal {
        emit SetRedeemDemand(redeemDemand, newDemand);
        redeemDemand = newDemand;
    }
}

/// @title RedeemManager 1.0.0 shape (devnet): a request's details without its initiator
contract RedeemManagerV1_0 is RedeemManagerBase {
    struct RedeemRequestV1_0 {
        uint256 amount;
        uint256 maxRedeemableEth;
        address recipient;
        uint256 height;
    }

    function getRedeemRequestDetails(uint32 redeemRequestId) external view returns (RedeemRequestV1_0 memory) {
        RedeemRequest storage request = redeemRequests[redeemRequestId];
        return RedeemRequestV1_0({
            amount: request.amount,
            maxRedeemableEth: request.maxRedeemableEth,
            recipient: request.recipient,
            height: request.height
        });
    }
}

/// @title RedeemManager 1.2.1 shape (devnet): a request's details with its initiator, and version()
contract RedeemManagerV1_2 is RedeemManagerBase {
    /// @notice The 1.2 upgrade's initializer (version 1): nothing to migrate on the devnet.
    function initializeRedeemManagerV1_2() external init(1) {}

    function getRedeemRequestDetails(uint32 redeemRequestId) external view returns (RedeemRequest memory) {
        return redeemRequests[redeemRequestId];
    }

    function version() external pure returns (string memory) {
        return "1.2.1";
    }
}
